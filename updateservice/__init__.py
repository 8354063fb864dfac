"""Available updates, as the CVO reports them in ClusterVersion status.

`semver` parses and orders versions as the CVO's semver library does; `graph` reads an update
service's graph and selects the cluster's available and conditional updates; `recommend` turns
evaluated risks into each conditional update's `Recommended` condition and keeps the PromQL
evaluation cache; `retrieval` words `RetrievedUpdates` and builds the update-service request.
All of these are pure (an injected `now` where time matters). The I/O — polling the update
service and querying Prometheus — lives in `poller` and is wired into `start`.
"""
