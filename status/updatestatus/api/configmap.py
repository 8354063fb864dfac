"""The ConfigMap API: insights ↔ ConfigMap `data`, and how the insights of nodes are sharded at scale.

Where: namespace `openshift-update-status-controller`, ConfigMap `status-api-cm-prototype`. The
controller never creates it; an administrator opts in by creating it (empty) and out by deleting
it. Keys the controller does not own (anything not starting with `usc-`) are left alone.

Keys (every key matches `[-._a-zA-Z0-9]+` and is at most 253 characters):

    usc-cv-<clusterversion>      ClusterVersion insight
    usc-co-<clusteroperator>     ClusterOperator insight
    usc-mcp-<pool>               MachineConfigPool insight
    usc-node-<node>              Node insight
    usc-health-<uid>             Health insight; <uid> is also the insight's `uid` field
    usc-shards                   (only when sharded, in the main ConfigMap) the names of the shard
                                 ConfigMaps, a JSON list

A name too long for its key (node names may have 253 characters) is cut and followed by `-` and
12 hex digits of its SHA-256, so keys stay unique; the full name is always inside the value.

Values: the insight with the API's JSON field names (camelCase), times as RFC 3339 strings with
nanoseconds, durations as Go duration strings (`10m0s`), unset optional fields omitted, written as
compact JSON on one line (JSON is YAML's flow style, so a value is still YAML; the characters YAML
reads differently from JSON, C1 controls, NEL, LS, PS and non-characters, are \\u escapes): JSON
is what clients parse fastest. Values in YAML block style, as earlier versions wrote all but node
insights, decode the same.

Sharding: the API server rejects a ConfigMap holding more than 1 MiB of data (`DATA_LIMIT`), but
ConfigMaps are filled only to `SHARD_BUDGET` (256 KiB): a one-key patch costs the API server time
in proportion to the ConfigMap's size (about 25 ms at 225 KB, 100 ms at 900 KB on a small control
plane), and every watcher receives the whole object again. When everything does not fit in
`status-api-cm-prototype`, the insights of nodes move to shard ConfigMaps
`status-api-cm-prototype-nodes-<i>` (i = 0 … S-1, S a power of two, at most `MAX_SHARDS` = 32:
`shard_names_allowed()` lists every name, which the controller's RBAC Role grants and nothing
more): node insights, and the health insights whose scope is a single node (a degraded or
unavailable node). Both are placed by the node's key, `usc-node-<node>`: shard
`crc32(node key) mod S`, so a node's health insights share its shard and a single node's change
touches one shard (plus its pool's insight in the main ConfigMap). Control-plane, pool and every
other health insight stay in `status-api-cm-prototype`. S is the smallest power of two for which
every shard fits, so 32 shards hold about 8 MiB (~10,000 nodes); growing S moves about half the
keys. The main ConfigMap's `usc-shards` key lists the shard names in use; a client reads the main
ConfigMap and every shard listed (`status.updatestatus.client.live` lists the namespace: one request,
one consistent view) and decodes the union of their `data` (a key may be in any of them; only
where a key lives differs, never its name or value). If even `MAX_SHARDS` shards
cannot hold the insights within the budget, or the main ConfigMap alone is too big, `plan()`
reports it in `ShardPlan.problems` (the writer then fills up to `DATA_LIMIT`, never beyond).
"""

from __future__ import annotations

# The format's parts, each in its module, re-exported here: the one place a writer or reader starts.
from status.updatestatus.api.encoding import decode as decode
from status.updatestatus.api.encoding import decode_readable as decode_readable
from status.updatestatus.api.encoding import encode as encode
from status.updatestatus.api.encoding import encode_value as encode_value
from status.updatestatus.api.keys import key_of as key_of
from status.updatestatus.api.keys import node_key as node_key
from status.updatestatus.api.names import CONFIGMAP as CONFIGMAP
from status.updatestatus.api.names import MAX_SHARDS as MAX_SHARDS
from status.updatestatus.api.names import NAMESPACE as NAMESPACE
from status.updatestatus.api.names import SHARD_PREFIX as SHARD_PREFIX
from status.updatestatus.api.names import SHARDS_KEY as SHARDS_KEY
from status.updatestatus.api.sharding import SHARD_BUDGET as SHARD_BUDGET
from status.updatestatus.api.sharding import ShardPlan as ShardPlan
from status.updatestatus.api.sharding import ShardPlanner as ShardPlanner
from status.updatestatus.api.sharding import data_size as data_size
from status.updatestatus.api.sharding import key_hash as key_hash
from status.updatestatus.api.sharding import layout_write_order as layout_write_order
from status.updatestatus.api.sharding import node_health_keys as node_health_keys
from status.updatestatus.api.sharding import node_of as node_of
from status.updatestatus.api.sharding import plan as plan
from status.updatestatus.api.sharding import shard_index as shard_index
from status.updatestatus.api.sharding import shard_name as shard_name
from status.updatestatus.api.sharding import shard_names_allowed as shard_names_allowed
from status.updatestatus.api.sharding import shard_of as shard_of
from status.updatestatus.api.wire import DATA_LIMIT as DATA_LIMIT
from status.updatestatus.api.wire import OWNED_PREFIX as OWNED_PREFIX
from status.updatestatus.api.wire import PREFIX_CO as PREFIX_CO
from status.updatestatus.api.wire import PREFIX_CV as PREFIX_CV
from status.updatestatus.api.wire import PREFIX_HEALTH as PREFIX_HEALTH
from status.updatestatus.api.wire import PREFIX_MCP as PREFIX_MCP
from status.updatestatus.api.wire import PREFIX_NODE as PREFIX_NODE
from status.updatestatus.api.wire import VALUE_LIMITS as VALUE_LIMITS
from status.updatestatus.api.wire import DecodeError as DecodeError
from status.updatestatus.api.wire import canonical_order as canonical_order
from status.updatestatus.api.wire import decode_value as decode_value
from status.updatestatus.api.wire import shard_names as shard_names
