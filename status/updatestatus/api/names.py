"""Where the update status API lives: the namespace, the ConfigMaps and the controller's Lease.

Names only, and no imports: a client starts its reads before it loads the insight models
(`status.updatestatus.client.live`).
"""

NAMESPACE = "openshift-update-status-controller"
CONFIGMAP = "status-api-cm-prototype"
SHARD_PREFIX = CONFIGMAP + "-nodes-"
SHARDS_KEY = "usc-shards"
LEASE = "update-status-controller-lock"  # the controller's leader-election Lease (in NAMESPACE)
