"""The sections `--details` expands, as `oc adm upgrade status --details=SECTION` names them.

Alone in a module without imports: `upgrade-status` checks the flag before it loads the renderer
and the insight models (live, the API requests leave in between)."""

DETAILS = ("none", "all", "nodes", "health", "operators")
