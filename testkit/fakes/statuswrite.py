"""Writing an object's status the way a controller does: read, edit, write back, and on a conflict
(someone wrote in between) read again. The one such loop of the kubelet and MCO players, the
operator harnesses and the demo."""

from __future__ import annotations

from collections.abc import Callable

from cvo_py.runtime.kube import JSON, ApiError, KubeClient, Resource


def write_status(
    client: KubeClient,
    res: Resource,
    name: str,
    mutate: Callable[[JSON], None],
    namespace: str | None = None,
    retries: int = 10,
) -> JSON:
    """Read the object, let `mutate` edit it in place (its status), write the status back; returns
    what the server stored. After `retries` conflicts in a row the last conflict is raised."""
    conflict: ApiError | None = None
    for _ in range(retries):
        obj = client.get(res, name, namespace)
        mutate(obj)
        try:
            return client.replace_status(res, obj)
        except ApiError as exc:
            if not exc.is_conflict():
                raise
            conflict = exc
    assert conflict is not None, "retries must be at least 1"
    raise conflict
