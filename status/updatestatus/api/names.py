"""Where the update status API lives: the namespace, the ConfigMaps and the controller's Lease.

Names only, and no imports: a client starts its reads before it loads the insight models
(`status.updatestatus.client.live`).
"""

NAMESPACE = "openshift-update-status-controller"
CONFIGMAP = "status-api-cm-prototype"
SHARD_PREFIX = CONFIGMAP + "-nodes-"
MAX_SHARDS = 32  # a power of two; the RBAC Role names exactly the main ConfigMap and these shards
SHARDS_KEY = "usc-shards"
LEASE = "update-status-controller-lock"  # the controller's leader-election Lease (in NAMESPACE)


def is_shard_name(name: str) -> bool:
    """Whether `name` is one of the API's shards: SHARD_PREFIX and 0 to MAX_SHARDS - 1, as written."""
    index = name[len(SHARD_PREFIX) :] if name.startswith(SHARD_PREFIX) else ""
    return index.isdigit() and index.isascii() and str(int(index)) == index and int(index) < MAX_SHARDS
