"""The Machine Config Operator's names that node and pool insights read: its annotations on a
node, its daemon's states, its pools' API group and the two pools every cluster has, and its
documentation."""

from __future__ import annotations

MCO_PREFIX = "machineconfiguration.openshift.io/"
CURRENT_CONFIG = MCO_PREFIX + "currentConfig"
DESIRED_CONFIG = MCO_PREFIX + "desiredConfig"
STATE = MCO_PREFIX + "state"
REASON = MCO_PREFIX + "reason"
DESIRED_DRAIN = MCO_PREFIX + "desiredDrain"
LAST_APPLIED_DRAIN = MCO_PREFIX + "lastAppliedDrain"
CURRENT_IMAGE = MCO_PREFIX + "currentImage"
DESIRED_IMAGE = MCO_PREFIX + "desiredImage"
RELEASE_IMAGE_VERSION = MCO_PREFIX + "release-image-version"
LAYERING_ENABLED = MCO_PREFIX + "layering-enabled"
NEWEST_IMAGE = MCO_PREFIX + "newestImageEquivalentConfig"
MCO_GROUP = "machineconfiguration.openshift.io"
MASTER = "master"
WORKER = "worker"

# Machine Config Daemon states
STATE_DONE = "Done"
STATE_WORKING = "Working"
STATE_REBOOTING = "Rebooting"
STATE_DEGRADED = "Degraded"
STATE_UNRECONCILABLE = "Unreconcilable"
DOC_MCO = (
    "https://docs.openshift.com/container-platform/latest/post_installation_configuration/"
    "machine-configuration-tasks.html#understanding-the-machine-config-operator"
)
