"""What every subcommand shares: the usage error (exit 2). Signals are `cvo_py.runtime.process`'s."""

from __future__ import annotations


class UsageError(Exception):
    """A flag value that parses but cannot be used; exits 2 like a parse error."""
