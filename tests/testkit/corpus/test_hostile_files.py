"""`run_limited` measures the peak memory of what it runs, not of the process that runs it."""

from __future__ import annotations

import subprocess
import sys

from testkit.corpus.files import run_limited

# A caller holding 160 MiB runs `true` and prints the peak RSS `run_limited` reports for it.
BIG_CALLER = """
from testkit.corpus.files import run_limited
held = bytearray(160 << 20)
for i in range(0, len(held), 4096):
    held[i] = 1
print(run_limited(["true"]).peak_rss_bytes)
"""


def test_the_peak_rss_is_the_childs_own_even_from_a_large_caller() -> None:
    out = subprocess.run([sys.executable, "-c", BIG_CALLER], capture_output=True, text=True, timeout=60, check=True)
    assert int(out.stdout) < 64 << 20, out.stdout  # `true` is a few MiB; the caller's 160 MiB must not count


def test_exit_code_output_memory_limit_and_timeout() -> None:
    done = run_limited([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"])
    assert (done.returncode, done.stdout, done.timed_out) == (3, "out\n", False)
    refused = run_limited([sys.executable, "-c", "bytearray(2 << 30)"], memory_bytes=1 << 30)
    assert refused.returncode == 1 and "MemoryError" in refused.stderr
    slow = run_limited(["sleep", "30"], timeout=0.5)
    assert slow.timed_out and slow.seconds < 30
