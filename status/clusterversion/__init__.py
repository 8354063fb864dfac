"""What `start` does to ClusterVersion: desired status, history, capabilities, writes, events, metrics."""
