module github.com/cvo-py/cvo-py/hack/cri-o

go 1.24.1

require github.com/cri-o/cri-o v1.34.0
