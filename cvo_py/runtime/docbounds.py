"""What the bounded document readers share: their bounds (`Limits`) and their one error (`DocumentError`).

`cvo_py.runtime.safeload` documents the bounds and is where readers get both; the YAML builder
(`cvo_py.runtime.safeyaml`) uses them from here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from cvo_py.runtime.gotext.quoting import escape

__all__ = ["CREDENTIAL_MAX_BYTES", "DEFAULT_LIMITS", "DocumentError", "Limits", "containers"]


class DocumentError(ValueError):
    """A document that cannot be used. `str()` is one line: `<source>: <problem>`."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = escape(" ".join(problem.split())[:300])  # printable, whatever the input held
        super().__init__(f"{escape(source)}: {self.problem}")


class Limits(NamedTuple):
    max_bytes: int = 64 * 1024 * 1024
    max_depth: int = 128
    max_aliases: int = 64
    max_alias_nodes: int = 10_000
    max_number_chars: int = 100


DEFAULT_LIMITS = Limits()

# A CA bundle, client certificate, key or bearer token file: far above real ones (the system's CA
# bundle is a few hundred KB), far below what hurts.
CREDENTIAL_MAX_BYTES = 4 << 20


def containers(doc: Any) -> Iterator[dict[Any, Any] | list[Any]]:
    """Every mapping and sequence of a read document once (aliases are shared), without recursion.
    A container's children are taken after the caller has seen it: it may replace its scalars."""
    pending: list[Any] = [doc]
    seen: set[int] = set()
    while pending:
        cur = pending.pop()
        if not isinstance(cur, dict | list) or id(cur) in seen:
            continue
        seen.add(id(cur))
        yield cur
        pending.extend(cur.values() if isinstance(cur, dict) else cur)
