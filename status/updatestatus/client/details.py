"""The values `upgrade-status` checks before it loads anything: the sections `--details` expands,
as `oc adm upgrade status --details=SECTION` names them, and the layouts `--format` names.

A module without imports, on the fast path (see `cvo_py.compose.upgrade_status`): the flags are
checked before the renderer, the insight classes or the dump readers load (live, the API requests
leave in between)."""

DETAILS = ("none", "all", "nodes", "health", "operators")
DUMP_FORMATS = ("auto", "must-gather", "insights", "snapshot")  # --format, the layout of --from
