"""Versions parse and order as the CVO's semver library does; its error texts are kept."""

from __future__ import annotations

import pytest

from updateservice import semver


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "Version string empty"),
        ("4.16", "No Major.Minor.Patch elements found"),
        ("4.x.1", 'Invalid character(s) found in minor number "x"'),
        ("04.1.1", 'Major number must not contain leading zeroes "04"'),
        ("4.01.1", 'Minor number must not contain leading zeroes "01"'),
        ("4.1.01", 'Patch number must not contain leading zeroes "01"'),
        ("4.1.", 'strconv.ParseUint: parsing "": invalid syntax'),
        ("4.1.1-", "Prerelease is empty"),
        ("4.1.1-rc.01", 'Version contains leading zeroes: "01"'),
        ("4.1.1-rc$", 'Invalid character(s) found in prerelease "rc$"'),
        ("4.1.1+", "Build meta data is empty"),
        ("4.1.1+a_b", 'Invalid character(s) found in build meta data "a_b"'),
        ("４.1.1", 'Invalid character(s) found in major number "４"'),
        ("99999999999999999999.1.1", 'strconv.ParseUint: parsing "99999999999999999999": value out of range'),
        ("1" * 5000 + ".1.1", "value out of range"),
    ],
)
def test_invalid_versions_name_the_library_error(text: str, error: str) -> None:
    with pytest.raises(semver.SemverError) as caught:
        semver.parse(text)
    assert error in str(caught.value)


def test_precedence_follows_semver() -> None:
    ordered = ["4.16.0-ec.1", "4.16.0-ec.2", "4.16.0-rc.0", "4.16.0-rc.0.a", "4.16.0", "4.16.1", "4.16.10", "4.17.0"]
    parsed = [semver.parse(v) for v in ordered]
    assert sorted(reversed(parsed)) == parsed
    assert semver.parse("4.16.0+build.1") == semver.parse("4.16.0")
    assert semver.parse("1.0.0-2") < semver.parse("1.0.0-10") < semver.parse("1.0.0-a")


def test_descending_puts_unparseable_versions_last_in_descending_string_order() -> None:
    assert semver.descending(["4.16.2", "x", "4.16.10", "b", "4.15.0"]) == ["4.16.10", "4.16.2", "4.15.0", "x", "b"]


def test_round_trip() -> None:
    for text in ("4.16.0", "4.16.0-rc.1+abc.1", "0.0.0-0"):
        assert str(semver.parse(text)) == text
