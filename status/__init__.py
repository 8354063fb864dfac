"""ClusterVersion status and update status insights."""
