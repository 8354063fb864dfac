// The floor of payload-failure reporting: the least any CVO must do to tell the admin why the
// version Pod fails. It watches the version Pods and, on each change of a Pod's status, writes one
// ClusterVersion status condition (ReleaseAccepted) carrying the Pod's reasons and messages.
//
// As a CVO does it: the ClusterVersion comes from a watch (a lister's cache), the status is PUT
// to /status with the cached object's resourceVersion (a 409 re-reads and tries again), over
// HTTP/2 with encoding/json. Nothing else runs: no classification, no queue, no rate limit, no
// other condition; the write happens on the Pod watch's own goroutine.
//
// Flags name the API server, its CA file and the namespace; the bearer token is read from the
// environment variable FLOOR_TOKEN. It prints "ready" on stdout once both watches have listed,
// then one line per status write on stderr with -v.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

type object = map[string]any

type client struct {
	server string
	token  string
	http   *http.Client
}

type apiError struct {
	code int
	body string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.code, strings.TrimSpace(e.body))
}

func (c *client) do(method, path string, body any) (object, error) {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.server+path, reader)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, &apiError{resp.StatusCode, string(data)}
	}
	var out object
	return out, json.Unmarshal(data, &out)
}

// watch lists path, hands every item to handle as LISTED, calls listed once, then watches from the
// list's resourceVersion for ever (again from the newest version seen when a watch ends; a fresh
// list when the server has compacted it).
func (c *client) watch(path, query string, handle func(string, object), listed func()) {
	rv := ""
	for {
		if rv == "" {
			list, err := c.do("GET", path+"?"+query, nil)
			if err != nil {
				fmt.Fprintf(os.Stderr, "list %s: %v\n", path, err)
				time.Sleep(time.Second)
				continue
			}
			items, _ := list["items"].([]any)
			for _, item := range items {
				if obj, ok := item.(object); ok {
					handle("LISTED", obj)
				}
			}
			rv = str(list, "metadata", "resourceVersion")
			if listed != nil {
				listed()
				listed = nil
			}
		}
		req, _ := http.NewRequest("GET", c.server+path+"?"+query+"&watch=true&allowWatchBookmarks=true&resourceVersion="+url.QueryEscape(rv), nil)
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Accept", "application/json")
		resp, err := c.http.Do(req)
		if err != nil {
			fmt.Fprintf(os.Stderr, "watch %s: %v\n", path, err)
			time.Sleep(time.Second)
			continue
		}
		decoder := json.NewDecoder(resp.Body)
		for {
			var event struct {
				Type   string `json:"type"`
				Object object `json:"object"`
			}
			if err := decoder.Decode(&event); err != nil {
				break
			}
			if event.Type == "ERROR" {
				rv = "" // gone or expired: list again
				break
			}
			if version := str(event.Object, "metadata", "resourceVersion"); version != "" {
				rv = version
			}
			if event.Type != "BOOKMARK" {
				handle(event.Type, event.Object)
			}
		}
		resp.Body.Close()
	}
}

// str is the string at a path of keys ("" when absent or not a string).
func str(obj object, keys ...string) string {
	var value any = obj
	for _, key := range keys {
		m, ok := value.(object)
		if !ok {
			return ""
		}
		value = m[key]
	}
	s, _ := value.(string)
	return s
}

func list(obj object, keys ...string) []any {
	var value any = obj
	for _, key := range keys {
		m, ok := value.(object)
		if !ok {
			return nil
		}
		value = m[key]
	}
	items, _ := value.([]any)
	return items
}

// problems are what the Pod's status says is wrong: its own reason and message, containers
// waiting for a reason other than starting, containers that exited non-zero, a deletion.
func problems(pod object) []string {
	var found []string
	if reason, message := str(pod, "status", "reason"), str(pod, "status", "message"); reason != "" || message != "" {
		found = append(found, fmt.Sprintf("pod %s: %s", reason, message))
	}
	for _, kind := range []string{"initContainerStatuses", "containerStatuses"} {
		for _, item := range list(pod, "status", kind) {
			status, _ := item.(object)
			name := str(status, "name")
			if reason := str(status, "state", "waiting", "reason"); reason != "" && reason != "PodInitializing" && reason != "ContainerCreating" {
				found = append(found, fmt.Sprintf("container %s waiting: %s: %s", name, reason, str(status, "state", "waiting", "message")))
			}
			state, _ := status["state"].(object)
			if terminated, ok := state["terminated"].(object); ok {
				if code, _ := terminated["exitCode"].(float64); code != 0 {
					found = append(found, fmt.Sprintf("container %s exit code %d: %s: %s", name, int(code), str(terminated, "reason"), str(terminated, "message")))
				}
			}
		}
	}
	if str(pod, "metadata", "deletionTimestamp") != "" {
		found = append(found, "the pod is being deleted")
	}
	return found
}

// releaseAccepted is the condition for the Pod's status.
func releaseAccepted(pod object) object {
	image := ""
	if containers := list(pod, "spec", "containers"); len(containers) > 0 {
		image = str(containers[0].(object), "image")
	}
	condition := object{"type": "ReleaseAccepted", "reason": "RetrievePayload"}
	if found := problems(pod); len(found) > 0 {
		condition["status"] = "False"
		condition["message"] = fmt.Sprintf("Retrieving payload failed version=\"\" image=%q failure=pod %s: %s", image, str(pod, "metadata", "name"), strings.Join(found, "; "))
	} else {
		condition["status"] = "Unknown"
		condition["message"] = fmt.Sprintf("Retrieving and verifying payload version=\"\" image=%q", image)
	}
	return condition
}

type floor struct {
	client  *client
	cvPath  string
	verbose bool

	mu     sync.Mutex
	cached object // the ClusterVersion, from its watch or our last write, whichever is newer
	last   map[string]string
}

func newer(a, b object) bool {
	x, errX := strconv.ParseUint(str(a, "metadata", "resourceVersion"), 10, 64)
	y, errY := strconv.ParseUint(str(b, "metadata", "resourceVersion"), 10, 64)
	return errX != nil || errY != nil || x >= y // resourceVersions are etcd revisions on this server
}

func (f *floor) onClusterVersion(kind string, cv object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if kind == "DELETED" {
		f.cached = nil
	} else if f.cached == nil || newer(cv, f.cached) {
		f.cached = cv
	}
}

func (f *floor) onPod(kind string, pod object) {
	if kind == "DELETED" {
		return
	}
	condition := releaseAccepted(pod)
	key := str(pod, "metadata", "uid")
	summary := condition["status"].(string) + condition["message"].(string)
	if f.last[key] == summary {
		return
	}
	f.last[key] = summary
	if kind == "LISTED" {
		return // what was there before we started is not a change
	}
	start := time.Now()
	if err := f.write(condition); err != nil {
		fmt.Fprintf(os.Stderr, "write %s: %v\n", condition["message"], err)
	} else if f.verbose {
		fmt.Fprintf(os.Stderr, "%s written in %s\n", condition["message"], time.Since(start))
	}
}

// write puts the condition into the cached ClusterVersion's status; a conflict reads it again.
func (f *floor) write(condition object) error {
	for attempt := 0; attempt < 10; attempt++ {
		f.mu.Lock()
		cv := f.cached
		f.mu.Unlock()
		if cv == nil {
			fresh, err := f.client.do("GET", f.cvPath, nil)
			if err != nil {
				return err
			}
			cv = fresh
		}
		status, _ := cv["status"].(object)
		updated := object{}
		for key, value := range status {
			updated[key] = value
		}
		conditions := []any{}
		for _, item := range list(cv, "status", "conditions") {
			if c, ok := item.(object); ok && c["type"] == "ReleaseAccepted" {
				if c["status"] == condition["status"] {
					condition["lastTransitionTime"] = c["lastTransitionTime"]
				}
				continue
			}
			conditions = append(conditions, item)
		}
		if condition["lastTransitionTime"] == nil {
			condition["lastTransitionTime"] = time.Now().UTC().Format(time.RFC3339)
		}
		updated["conditions"] = append(conditions, condition)
		body := object{}
		for key, value := range cv {
			body[key] = value
		}
		body["status"] = updated
		written, err := f.client.do("PUT", f.cvPath+"/status", body)
		var apiErr *apiError
		if errors.As(err, &apiErr) && apiErr.code == 409 {
			f.mu.Lock()
			f.cached = nil
			f.mu.Unlock()
			continue
		}
		if err != nil {
			return err
		}
		f.onClusterVersion("MODIFIED", written)
		return nil
	}
	return errors.New("conflicts on every try")
}

func main() {
	server := flag.String("server", "", "API server URL")
	caFile := flag.String("ca-file", "", "CA bundle of the API server")
	namespace := flag.String("namespace", "openshift-cluster-version", "namespace of the version Pods")
	name := flag.String("name", "version", "the ClusterVersion")
	selector := flag.String("selector", "k8s-app=retrieve-openshift-release", "label selector of the version Pods")
	verbose := flag.Bool("v", false, "log each status write")
	flag.Parse()
	pem, err := os.ReadFile(*caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		fmt.Fprintf(os.Stderr, "no certificate in %s\n", *caFile)
		os.Exit(2)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 8}
	c := &client{server: strings.TrimRight(*server, "/"), token: os.Getenv("FLOOR_TOKEN"), http: &http.Client{Transport: transport}}
	f := &floor{client: c, cvPath: "/apis/config.openshift.io/v1/clusterversions/" + url.PathEscape(*name), verbose: *verbose, last: map[string]string{}}

	var ready sync.WaitGroup
	ready.Add(2)
	go c.watch("/apis/config.openshift.io/v1/clusterversions", "fieldSelector="+url.QueryEscape("metadata.name="+*name), f.onClusterVersion, ready.Done)
	go c.watch("/api/v1/namespaces/"+url.PathEscape(*namespace)+"/pods", "labelSelector="+url.QueryEscape(*selector), f.onPod, ready.Done)
	ready.Wait()
	fmt.Println("ready")
	select {}
}
