"""Release-payload retrieval: verify the target release, fetch its manifests with a version Pod,
and say exactly what went wrong when that fails."""
