"""What every subcommand shares: the usage error (exit 2) and the check of `--namespace`, which the
update status controller and its reader `upgrade-status` take alike. Signals are
`cvo_py.runtime.process`'s."""

from __future__ import annotations

import re

from cvo_py.runtime.errors import ConfigError

# An RFC 1123 label, as Kubernetes requires of a namespace name: ASCII only (str.islower would
# take "é", which the API server refuses).
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


class UsageError(ConfigError):
    """A flag value that parses but cannot be used; exits 2 like a parse error."""


def checked_namespace(namespace: str) -> str:
    """`namespace` when it can name a namespace (an RFC 1123 label), else a one-line UsageError."""
    if _DNS_LABEL.fullmatch(namespace) is None:
        from cvo_py.runtime.gotext.quoting import go_quote

        raise UsageError(f"invalid --namespace {go_quote(namespace)}: want a DNS label")
    return namespace
