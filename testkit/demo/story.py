"""A scenario told as data: stages of steps, each "what to do, what to wait for, what to show".

The demo is one; a benchmark or a test can run the same way. A step's texts are strings or
functions of the running story; waits are bounded (`wait_until`) and check `healthy()` first, so a
dead process fails the step at once; figures are the seconds a wait took from a chosen mark.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, Generic, TypeVar

from cvo_py.runtime.kube import ApiError
from testkit.harness.wait import wait_until

S = TypeVar("S", bound="Story")


class StoryError(Exception):
    """The story cannot go on; the text says what did not happen."""


@dataclass
class Step(Generic[S]):
    say: str | Callable[[S], str] = ""
    do: Callable[[S], object] | tuple[Callable[[S], object], ...] | None = None  # one action, or several in turn
    wait: Callable[[S], Any] | None = None
    what: str = ""  # what the wait is for, in the timeout message
    timeout: float = 30.0
    figure: str = ""  # record the seconds from `since` (default: the step's start) to the wait's end
    since: Callable[[S], float] | None = None
    then: str | Callable[[S], str] = ""
    show: Callable[[S], tuple[str, str]] | None = None  # (title, body)
    pause: bool = False


def seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def wrap(text: str, indent: str = "    ", width: int = 108) -> str:
    """Paragraphs wrapped under `indent`; commands (`$ ...`) print whole, so they can be copied."""
    if text.startswith("$ "):
        return indent + text
    return "\n".join(
        textwrap.fill(line, width, initial_indent=indent, subsequent_indent=indent + "  ",
                      break_on_hyphens=False, break_long_words=False) or indent
        for line in text.splitlines()
    )  # fmt: skip


class Story:
    """Runs `stages` ((title, steps) pairs), printing numbered stage headers with elapsed time."""

    def __init__(self, pause: float) -> None:
        self.pause_seconds = pause
        self.started = time.monotonic()
        self.stage_no = 0
        self.stage_times: list[tuple[str, float]] = []  # (title, seconds spent; the start while running)
        self.figures: dict[str, float] = {}
        self.marks: dict[str, float] = {}
        self.got: Any = None  # what the last wait returned

    def healthy(self) -> bool:
        """Raise StoryError when waiting longer makes no sense (overridden)."""
        return True

    def say(self, text: str) -> None:
        if text:
            print(wrap(text), flush=True)

    def show(self, title: str, body: str) -> None:
        lines = [f"    ┌─ {title}", *(f"    │ {line}" for line in body.rstrip("\n").splitlines()), "    └─"]
        print("\n".join(lines), flush=True)

    def run_stages(self, stages: Sequence[tuple[str, Sequence[Step[Any]]]]) -> None:
        for title, steps in stages:
            now = time.monotonic()
            if self.stage_times:
                self.stage_times[-1] = (self.stage_times[-1][0], now - self.stage_times[-1][1])
            self.stage_no += 1
            self.stage_times.append((title, now))
            print(f"\n[{self.stage_no}/{len(stages)}] {title}  (t+{now - self.started:.1f}s)", flush=True)
            for step in steps:
                self.step(step)

    def step(self, step: Step[Any]) -> None:
        self.say(self.text(step.say))
        begun = time.monotonic()
        for do in step.do if isinstance(step.do, tuple) else [step.do] if step.do is not None else []:
            do(self)
        if step.wait is not None:
            wait = step.wait
            try:
                self.got = wait_until(lambda: self.healthy() and wait(self), step.timeout, step.what,
                                      interval=0.02, tolerate=(ApiError,))  # fmt: skip
            except AssertionError as exc:
                raise StoryError(f"timed out: {exc}") from None
        if step.figure:
            self.figures[step.figure] = time.monotonic() - (step.since(self) if step.since else begun)
        self.say(self.text(step.then))
        if step.show is not None:
            self.show(*step.show(self))
        if step.pause and self.pause_seconds > 0:
            time.sleep(self.pause_seconds)

    def text(self, text: str | Callable[[Any], str]) -> str:
        return text(self) if callable(text) else text

    def stage_summary(self) -> None:
        """The seconds each finished stage took."""
        for number, (title, spent) in enumerate(self.stage_times[:-1], start=1):
            self.say(f"stage {number}: {spent:6.1f} s  {title}")


# -- the pause options of a story told on a terminal ---------------------------------------------


def add_pause_arguments(parser: argparse.ArgumentParser, default: float) -> None:
    parser.add_argument("--fast", action="store_true", default=None, help="no pauses (for tests and CI)")
    parser.add_argument("--pause", type=parse_pause, default=None, metavar="SECONDS",
                        help=f"pause after each step so the output can be read (default {default:g})")  # fmt: skip


def resolve_pause(parser: argparse.ArgumentParser, args: argparse.Namespace, default: float, env: str) -> None:
    """`args.fast` and `args.pause` from the flags, else `<env>_FAST` and `<env>_PAUSE`; fast wins."""
    if args.fast is None:
        args.fast = os.environ.get(f"{env}_FAST", "").lower() in ("1", "true", "yes")
    if args.pause is None:
        raw = os.environ.get(f"{env}_PAUSE")
        try:
            args.pause = parse_pause(raw) if raw else default
        except argparse.ArgumentTypeError as exc:
            parser.error(f"{env}_PAUSE: {exc}")
    if args.fast:
        args.pause = 0.0


def parse_pause(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid pause {text!r}: want seconds, e.g. 1.5") from None
    if not 0 <= value <= 60:
        raise argparse.ArgumentTypeError(f"invalid pause {text!r}: want 0 to 60 seconds")
    return value


def tell(run: Callable[[], None], failures: tuple[type[Exception], ...], where: Callable[[], str]) -> int:
    """Run a story as a command: SIGTERM and SIGINT (also when started in the background, where
    SIGINT may be inherited as ignored) interrupt it, and `run` must stop what it started on the
    way out. Returns the exit code: 0, 130 when interrupted, 1 on one of `failures` (printed
    with `where()`, e.g. the stage and where the logs are)."""

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    caught: tuple[type[Exception], ...] = (StoryError, *failures)
    try:
        run()
    except KeyboardInterrupt:
        print("\ninterrupted: the processes it started are stopped; the cluster keeps running", file=sys.stderr)
        return 130
    except caught as exc:
        print(f"\nfailed {where()}: {exc}", file=sys.stderr)
        return 1
    return 0
