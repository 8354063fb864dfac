module github.com/cvo-py/cvo-py/hack/cri-o

go 1.24.1

require github.com/cri-o/cri-o v1.34.0

require github.com/opencontainers/runc v1.2.6 // indirect
