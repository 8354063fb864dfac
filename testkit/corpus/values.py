"""Generators for the hostile inputs too large (or too regular) to check in as files."""

from __future__ import annotations

import re

# A character a terminal could act on (C0 and C1 controls, DEL, bidi overrides and isolates, line and
# paragraph separators): never printed raw.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

# What a message claimed Go-shaped must never carry: Python's own wording of its exceptions and
# limits (reprs of exception tuples, class names, errno brackets, interpreter limits).
PYTHON_WORDING = re.compile(
    r"\('|\w+(Error|Exception|Disconnected|Line|Read|Long)\(|Traceback|maximum recursion depth|Exceeds the limit"
    r"|set_int_max_str_digits|object at 0x|<urllib3|HTTPConnection|NoneType|\[Errno |_ssl\.c:|Connection aborted"
)


def deep_flow(levels: int = 30_000) -> str:
    """`[[[…]]]` nested `levels` deep: C or Python recursion over it overflows the stack."""
    return "[" * levels + "]" * levels


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs" flow value: `levels` anchors, each `width` aliases of the previous."""
    parts = ['&a0 ["lol"]']
    for i in range(1, levels):
        parts.append(f"&a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "[" + ", ".join(parts) + "]"


def alias_bomb_document(field: str, levels: int = 9) -> str:
    """A YAML mapping whose `field` is the last level of an alias bomb (the anchors come first)."""
    lines = ['x0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    lines.append(f"{field}: *a{levels - 1}")
    return "\n".join(lines) + "\n"


def huge_integer(digits: int = 4_301) -> str:
    return "9" * digits
