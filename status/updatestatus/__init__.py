"""The Update Status Controller: publishes update status insights in the ConfigMap API."""
