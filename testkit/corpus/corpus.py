"""The corpus of hostile snapshot inputs: each entry writes a snapshot and says what must come out.

Every entry is a snapshot written by `write(tmp_path)` (the large ones generated, the rest small
objects), run as `upgrade-status --mock-clusterversion … --details=all`; `exit_code` and either
the one stderr line (`stderr`, a regex) or text stdout must contain (`stdout`) are the expectation.
bench/hostile_inputs.py measures the same entries.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from testkit.corpus import values
from testkit.objects.insight_objects import (
    at,
    clusterversion,
    cond,
    entry,
    node,
    operator,
    pool,
    write_snapshot,
)

ESC_TITLE = "\x1b]0;owned\x07"  # OSC: retitles the terminal
CLEAR = "\x1b[2J\r"  # clears the screen, returns the carriage
BIDI = "\u202e\u2066"  # right-to-left override, isolate
HOSTILE_TEXT = ESC_TITLE + CLEAR + BIDI + "\x00\x85\u2028"
ESCAPED_TEXT = "\\x1b]0;owned\\a\\x1b[2J\\r\\u202e\\u2066\\x00\\u0085\\u2028"


@dataclass(frozen=True)
class Case:
    name: str
    write: Callable[[Path], Path]  # writes the snapshot, returns its -cv.yaml path
    exit_code: int
    stderr: str = ""  # regex the single stderr line must match (exit != 0)
    stdout: tuple[str, ...] = ()  # texts stdout must contain (exit 0)
    args: tuple[str, ...] = field(default=())


def _files(files: dict[str, Any]) -> dict[str, Any]:
    """Snapshot file contents by suffix, as `write_snapshot` overrides them."""
    return files


def _cv_text(tmp: Path, text: str, suffix: str = "-cv.yaml") -> Path:
    return write_snapshot(tmp, **_files({suffix: text}))


def _with_field(doc: dict[str, Any], field_path: tuple[Any, ...], anchor_doc: str) -> str:
    """`doc` as YAML, with the value at `field_path` replaced by the last alias of an alias bomb."""
    marker = "__HOSTILE__"
    cur: Any = doc
    for key in field_path[:-1]:
        cur = cur[key]
    cur[field_path[-1]] = marker
    text = yaml.safe_dump(doc, width=1 << 20)
    return anchor_doc + text.replace(f"'{marker}'", "*a8").replace(marker, "*a8")


def _bomb_anchors() -> str:
    lines = ['bomb0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 9):
        lines.append(f"bomb{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def _alias_bomb_ltt(tmp: Path) -> Path:
    cv = clusterversion()
    return _cv_text(tmp, _with_field(cv, ("status", "conditions", 0, "lastTransitionTime"), _bomb_anchors()))


def _alias_bomb_message(tmp: Path) -> Path:
    ops = {"kind": "List", "items": [operator("a", message="x"), operator("b")]}
    text = _with_field(ops, ("items", 0, "status", "conditions", 2, "message"), _bomb_anchors())
    return write_snapshot(tmp, **_files({"-co.yaml": text}))


def _huge_int(tmp: Path) -> Path:
    pools = "kind: List\nitems: []\ngeneration: " + values.huge_integer() + "\n"
    return write_snapshot(tmp, **_files({"-mcp.yaml": pools}))


def _tagged_pool_file(tmp: Path) -> Path:
    return write_snapshot(tmp, **_files({"-mcp.yaml": "kind: List\nitems: []\nx: !!bool maybe\n"}))


def _tagged_generation(tmp: Path) -> Path:
    return _cv_text(tmp, "kind: ClusterVersion\nstatus: {observedGeneration: !!int ''}\n")


def _number_past_float64(tmp: Path) -> Path:
    return write_snapshot(tmp, **_files({"-alerts.json": '{"data": {"alerts": [1e400]}}'}))


def _huge_int_json(tmp: Path) -> Path:
    return write_snapshot(tmp, **_files({"-alerts.json": '{"data": {"alerts": [' + values.huge_integer() + "]}}"}))


def _deep_json(tmp: Path) -> Path:
    return write_snapshot(tmp, **_files({"-node.yaml": '{"kind": "List", "items": ' + values.deep_flow(5_000) + "}"}))


def _deep_yaml(tmp: Path) -> Path:
    return _cv_text(tmp, "kind: ClusterVersion\nstatus: " + values.deep_flow(30_000) + "\n")


def _oversized(tmp: Path) -> Path:
    cv = write_snapshot(tmp)
    with open(tmp / "x-node.yaml", "r+b") as f:  # sparse: 65 MiB that take no disk
        f.truncate(65 * 1024 * 1024)
    return cv


def _full_width(tmp: Path) -> Path:
    cv = clusterversion()
    cv["status"]["conditions"][0]["lastTransitionTime"] = "２０２３-１１-０１T00:00:00Z"
    return write_snapshot(tmp, **_files({"-cv.yaml": cv}))


def _offset(tmp: Path) -> Path:
    cv = clusterversion()
    cv["status"]["conditions"][0]["lastTransitionTime"] = "2023-11-01T00:00:00+25:00"
    return write_snapshot(tmp, **_files({"-cv.yaml": cv}))


def _mapping_version(tmp: Path) -> Path:
    cv = clusterversion(history=[entry("4.14.1", "Partial", at(0)), entry("4.14.0", "Completed", at(-60), at(-30))])
    cv["status"]["history"][0]["version"] = {"major": 4, "minor": 14}
    return write_snapshot(tmp, **_files({"-cv.yaml": cv}))


def _negative_duration(tmp: Path) -> Path:
    # started 30 minutes after the snapshot's "now": oc would print a negative duration
    cv = clusterversion(history=[entry("4.14.1", "Partial", at(30)), entry("4.14.0", "Completed", at(-60), at(-30))])
    return write_snapshot(tmp, **_files({"-cv.yaml": cv}))


def _escapes_everywhere(tmp: Path) -> Path:
    h = HOSTILE_TEXT
    cv = clusterversion(
        history=[entry("4.14.1" + h, "Partial", at(0)), entry("4.14.0" + h, "Completed", at(-60), at(-30))],
        failing="True",
        failing_reason="Bad" + h,
        failing_message="failing" + h,
    )
    ops = {
        "kind": "List",
        "items": [
            operator(
                "op" + h, version="4.14.0", progressing="True", reason="Why" + h, message="msg" + h + "\nline2" + h
            ),
            operator("b", degraded="True"),
        ],
    }
    bad_ready = cond("Ready", "False", at(-30), "KubeletDown" + h, "down" + h)
    nodes = {
        "kind": "List",
        "items": [
            node("w1" + h, extra_annotations={"machineconfiguration.openshift.io/reason": "r" + h}, state="Degraded"),
            node("m1" + h, role="master"),
            {**node("w2" + h), "status": {"conditions": [bad_ready]}},
        ],
    }
    pools = {"kind": "List", "items": [pool("master"), pool("worker"), pool("infra" + h[:4], label="infra")]}
    cv_path = write_snapshot(tmp, **_files({"-cv.yaml": cv, "-co.yaml": ops, "-node.yaml": nodes, "-mcp.yaml": pools}))
    return cv_path


FILE = r"\S*x-{}: "
CORPUS: list[Case] = [
    Case(
        "deep YAML nesting (30,000 levels)", _deep_yaml, 2, FILE.format("cv.yaml") + "nested more than 128 levels deep"
    ),
    Case("JSON deeper than the recursion limit", _deep_json, 2, FILE.format("node.yaml") + "nested more than 128"),
    Case("alias bomb in lastTransitionTime", _alias_bomb_ltt, 2, FILE.format("cv.yaml") + "aliases expand to more"),
    Case(
        "alias bomb in a condition message", _alias_bomb_message, 2, FILE.format("co.yaml") + "aliases expand to more"
    ),
    Case("4,301-digit integer (YAML)", _huge_int, 2, FILE.format("mcp.yaml") + "a number of 4301 characters"),
    Case("4,301-digit integer (JSON)", _huge_int_json, 2, FILE.format("alerts.json") + "a number of 4301 characters"),
    Case("!!bool maybe", _tagged_pool_file, 2, FILE.format("mcp.yaml") + '!!bool cannot hold "maybe"'),
    Case("!!int ''", _tagged_generation, 2, FILE.format("cv.yaml") + '!!int cannot hold ""'),
    Case(
        "a JSON number past float64",
        _number_past_float64,
        2,
        FILE.format("alerts.json") + "json: cannot unmarshal number 1e400 into Go value of type float64",
    ),
    Case("a 65 MiB file", _oversized, 2, FILE.format("node.yaml") + "68157440 bytes, more than the limit of 67108864"),
    Case("full-width digits in a time", _full_width, 2, FILE.format("cv.yaml") + "invalid RFC 3339 timestamp"),
    Case("+25:00 offset", _offset, 2, FILE.format("cv.yaml") + ".*time zone offset out of range"),
    Case(
        "mapping as history[].version",
        _mapping_version,
        2,
        FILE.format("cv.yaml") + ".*history\\[0\\]\\.version is dict",
    ),
    Case(
        "history entry started after now",
        _negative_duration,
        0,
        stdout=("(duration: unknown: history[0].startedTime is after now)", "\n-       Info    None     Update is"),
    ),
    Case(
        "escape sequences in every displayed field",
        _escapes_everywhere,
        0,
        stdout=(
            "op" + ESCAPED_TEXT,  # operator name
            "Why\\x1b]0;owned\\a\\x1b[2J...",  # reason, cut at 20 characters as oc cuts it, then escaped
            "msg" + ESCAPED_TEXT,  # message, first line
            "line2" + ESCAPED_TEXT,  # and its next line
            "4.14.1" + ESCAPED_TEXT + " (from 4.14.0" + ESCAPED_TEXT + ")",  # versions
            "w2" + ESCAPED_TEXT,  # node name
            "failing" + ESCAPED_TEXT,  # health description
        ),
        args=("--details=all",),
    ),
]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}
