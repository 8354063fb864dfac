"""Semantic versions as the CVO's semver library parses and orders them (pure): what the update
service offers and what a release's metadata says it is.

The error texts are the library's, since they reach `RetrievedUpdates` messages verbatim.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from cvo_py.runtime.gotext.quoting import go_quote

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") | _NUMBERS
_MAX_UINT64 = 2**64 - 1


class SemverError(ValueError):
    """A version that is not strict semver; str() is the library's message."""


def _only(s: str, allowed: frozenset[str]) -> bool:
    return all(c in allowed for c in s)


def _uint(s: str) -> int:
    # strconv.ParseUint(s, 10, 64): digits only were checked; empty or too large is an error.
    if not s:
        raise SemverError(f'strconv.ParseUint: parsing "{s}": invalid syntax')
    # Checked by length first: int() of thousands of digits is refused by Python itself.
    if len(s) > 20 or int(s) > _MAX_UINT64:
        raise SemverError(f'strconv.ParseUint: parsing "{s}": value out of range')
    return int(s)


@functools.total_ordering
@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    def __str__(self) -> str:
        out = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            out += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            out += "+" + ".".join(self.build)
        return out

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]:
        # A release (no pre-release) sorts after all its pre-releases; numeric identifiers sort
        # before alphanumeric ones; build metadata does not count.
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: Version) -> bool:
        return self._key() < other._key()


def parse(s: str) -> Version:
    """Parse strict semver MAJOR.MINOR.PATCH[-PRE][+BUILD]; raise SemverError with the library's text."""
    if not s:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    numbers = []
    for name, part in (("major", parts[0]), ("minor", parts[1])):
        if not _only(part, _NUMBERS):
            raise SemverError(f"Invalid character(s) found in {name} number {go_quote(part)}")
        if len(part) > 1 and part[0] == "0":
            raise SemverError(f"{name.capitalize()} number must not contain leading zeroes {go_quote(part)}")
        numbers.append(_uint(part))
    rest = parts[2]
    build: list[str] = []
    pre_raw: list[str] = []
    if "+" in rest:
        rest, _, meta = rest.partition("+")
        build = meta.split(".")
    if "-" in rest:
        rest, _, pre_text = rest.partition("-")
        pre_raw = pre_text.split(".")
    if not _only(rest, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in patch number {go_quote(rest)}")
    if len(rest) > 1 and rest[0] == "0":
        raise SemverError(f"Patch number must not contain leading zeroes {go_quote(rest)}")
    patch = _uint(rest)
    pre: list[int | str] = []
    for identifier in pre_raw:
        if not identifier:
            raise SemverError("Prerelease is empty")
        if _only(identifier, _NUMBERS):
            if len(identifier) > 1 and identifier[0] == "0":
                raise SemverError(f"Version contains leading zeroes: {go_quote(identifier)}")
            pre.append(_uint(identifier))
        elif _only(identifier, _ALPHANUM):
            pre.append(identifier)
        else:
            raise SemverError(f"Invalid character(s) found in prerelease {go_quote(identifier)}")
    for identifier in build:
        if not identifier:
            raise SemverError("Build meta data is empty")
        if not _only(identifier, _ALPHANUM):
            raise SemverError(f"Invalid character(s) found in build meta data {go_quote(identifier)}")
    return Version(numbers[0], numbers[1], patch, tuple(pre), tuple(build))


def valid(s: str) -> bool:
    try:
        parse(s)
    except SemverError:
        return False
    return True


def descending(versions: list[str]) -> list[str]:
    """Newest first; strings that are not semver last, in descending string order (as oc prints)."""
    good = [(parse(v), v) for v in versions if valid(v)]
    bad = sorted((v for v in versions if not valid(v)), reverse=True)
    return [v for _, v in sorted(good, key=lambda pair: pair[0], reverse=True)] + bad
