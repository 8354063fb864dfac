"""Peak memory and time of every hostile input, each beside the bound it must stay under.

Every case runs in its own child process; the peak RSS is that child's own (wait4 or VmHWM), the
time wall time. Sections (`--sections`, default all):

- snapshots: `upgrade-status --mock-clusterversion …` on each entry of the hostile snapshot corpus
  (testkit/corpus/corpus.py, the one the tests use) and on large generated snapshots whose
  -node.yaml holds N nodes padded to the size asked for, as JSON (API server output) or YAML;
- files: a FIFO, /dev/zero and a symlink to either, everywhere a command reads a named file
  (testkit/corpus/files.py: the kubeconfig and the files it names, serving certificates,
  CA and token files, snapshot files), each refused in one line;
- flags: every malformed value of every kind of flag (testkit/corpus/flags.py), each tried
  on one flag of its kind; the slowest and largest child per kind;
- endpoints: the metrics server (the one `start` and `update-status-controller` serve, default
  bounds) in a child, over HTTP and HTTPS, while idle connections, slow-loris drips and
  header stuffing (99 headers of 65 KB) hold 120 connections each: /healthz latency on a new
  connection every quarter second (p50, p99, max) and the server's peak RSS;
- answers: the update service's and the alerts API's clients against servers that answer badly
  (testkit/corpus/servers.py: a 12 MB error, 100,000-deep JSON, a 5,000-digit number,
  escape sequences in the status line, redirect loops, resets), each in a child.

    .venv/bin/python bench/hostile_inputs.py [--sections snapshots,files,flags,endpoints,answers]
                                             [--large-mb 100 16] [--yaml-mb 16] [--attack-seconds 8]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cvo_py.runtime.safeload import DEFAULT_LIMITS
from cvo_py.runtime.serving.admission import DEFAULT_LIMITS as SERVING_LIMITS
from testkit.checkout import REPO
from testkit.corpus import flags as hostile_flags
from testkit.corpus.clients import attacking, metrics_server_child, probe_for
from testkit.corpus.corpus import CORPUS
from testkit.corpus.files import SPECIAL_FILE_FLAGS, SPECIAL_KINDS, cli, peak_rss, run_limited, special_file
from testkit.corpus.servers import BEHAVIOURS, HostileServer
from testkit.harness.certs import self_signed
from testkit.objects.insight_objects import node, write_snapshot

SECTIONS = ("snapshots", "files", "flags", "endpoints", "answers")
MEMORY_LIMIT = 1 << 30  # every child's address space (RLIMIT_AS): a case that would take more fails, not the machine

# The bounds each case must stay under (the tests assert them, more generously where timing is involved).
REFUSAL_SECONDS = 5.0
REFUSAL_RSS = 200 << 20
PROBE_SECONDS = 1.0
SERVER_RSS = 150 << 20
ANSWER_SECONDS = 35.0  # the clients' 30 s deadline (alerts: 10 s), plus a start-up
ANSWER_RSS = 200 << 20


def row(name: str, code: object, seconds: float, rss: int, bound: str, note: str = "") -> None:
    print(f"{name[:52]:<52} {code!s:>5} {seconds:>8.2f} {rss / (1 << 20):>8.0f}MB  {bound:<22} {note[:80]}",
          flush=True)


def header(title: str) -> None:
    print(f"\n== {title}")
    print(f"{'CASE':<52} {'EXIT':>5} {'SECONDS':>8} {'PEAK RSS':>10}  {'BOUND':<22} FIRST STDERR LINE / FIGURES")


# -- snapshots -----------------------------------------------------------------------------------------


def large_snapshot(tmp: Path, megabytes: int, as_yaml: bool) -> Path:
    """A snapshot whose -node.yaml is about `megabytes` MB: nodes with a padding annotation."""
    pad = "p" * 2000
    items = []
    size = 0
    i = 0
    while size < megabytes * 1_000_000:
        n = node(f"worker-{i:06d}", extra_annotations={"example.com/padding": pad})
        items.append(n)
        size += len(json.dumps(n))
        i += 1
    doc = {"apiVersion": "v1", "kind": "List", "items": items}
    if as_yaml:
        import yaml

        text = yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), width=1 << 20)
    else:
        text = json.dumps(doc)
    files: dict[str, Any] = {"-node.yaml": text}
    return write_snapshot(tmp, **files)


def write_large(tmp: Path, megabytes: int, fmt: str) -> Path:
    """`large_snapshot` in a child process: this one stays small, so the measured children (which
    start as copies of it) do not inherit its memory."""
    subprocess.run([sys.executable, __file__, "--write", str(tmp), str(megabytes), fmt], check=True)
    return tmp / "x-cv.yaml"


def snapshots(large_mb: list[int], yaml_mb: list[int]) -> None:
    header("snapshots: upgrade-status --mock-clusterversion")
    cases: list[tuple[str, Callable[[Path], Path], tuple[str, ...], str]] = [
        (c.name, c.write, c.args, f"exit {c.exit_code}, <{REFUSAL_RSS >> 20}MB") for c in CORPUS
    ]
    for fmt, sizes in (("json", large_mb), ("yaml", yaml_mb)):
        for mb in sizes:
            bound = "refused" if mb * 1_000_000 > DEFAULT_LIMITS.max_bytes else f"<{5 if fmt == 'yaml' else 3.5}x input"
            cases.append((f"{mb} MB snapshot ({fmt.upper()} nodes)", _large(mb, fmt), (), bound))
    for name, write, extra, bound in cases:
        with tempfile.TemporaryDirectory() as tmp:
            cv = write(Path(tmp))
            size = sum(p.stat().st_size for p in Path(tmp).iterdir() if p.is_file())
            result = run_limited(cli("upgrade-status", "--mock-clusterversion", str(cv), *extra), cwd=REPO,
                                 timeout=600, memory_bytes=4 << 30)
        row(f"{name} ({size / 1e6:.1f}MB)", result.returncode, result.seconds, result.peak_rss_bytes, bound,
            result.stderr.splitlines()[0] if result.stderr else "")
    limits = DEFAULT_LIMITS
    print(f"bounds: files over {limits.max_bytes} bytes refused before reading; depth {limits.max_depth}; "
          f"{limits.max_aliases} aliases standing for at most {limits.max_alias_nodes} nodes; "
          f"numbers of at most {limits.max_number_chars} characters")


def _large(mb: int, fmt: str) -> Callable[[Path], Path]:
    return lambda tmp: write_large(tmp, mb, fmt)


# -- files and flags ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def files(certificate: tuple[str, str]) -> None:
    header("files: a FIFO, /dev/zero or a symlink to either, where a file is named")
    for case, build in SPECIAL_FILE_FLAGS.items():
        for kind in SPECIAL_KINDS:
            with _workdir() as tmp:
                special = special_file(tmp, kind, "special")
                work = tmp / "work"
                work.mkdir()
                result = run_limited(cli(*build(special, work, certificate)), cwd=REPO, env=_env(tmp),
                                     timeout=60, memory_bytes=MEMORY_LIMIT)
            code = "hang" if result.timed_out else result.returncode
            row(f"{case} <- {kind}", code, result.seconds, result.peak_rss_bytes,
                f"exit 2, <{REFUSAL_SECONDS:g}s, <{REFUSAL_RSS >> 20}MB", result.stderr.strip().splitlines()[-1:][0]
                if result.stderr.strip() else "")


def flags(certificate: tuple[str, str]) -> None:
    header("flags: every malformed value of every kind (one flag per kind), slowest and largest child")
    first_flag: dict[str, tuple[str, str]] = {}
    for (sub, flag), kind in hostile_flags.FLAG_KINDS.items():
        first_flag.setdefault(kind, (sub, flag))
    with _workdir() as tmp:
        placeholders = {**hostile_flags.materialize(tmp), "CERT": certificate[0], "KEY": certificate[1]}
        for kind, (sub, flag) in first_flag.items():
            results = []
            for value in hostile_flags.MALFORMED[kind]:
                argv = hostile_flags.argv(sub, flag, kind, value, placeholders)
                results.append(run_limited(cli(*argv), cwd=REPO, env=_env(tmp), timeout=60,
                                           memory_bytes=MEMORY_LIMIT))
            codes = sorted({"hang" if r.timed_out else str(r.returncode) for r in results})
            slowest = max(results, key=lambda r: r.seconds)
            row(f"{sub} {flag} ({kind}, {len(results)} values)", "/".join(codes), slowest.seconds,
                max(r.peak_rss_bytes for r in results), f"exit 2, <{REFUSAL_SECONDS:g}s, <{REFUSAL_RSS >> 20}MB",
                slowest.stderr.strip()[:80])


# -- endpoints -------------------------------------------------------------------------------------------

def endpoints(certificate: tuple[str, str], seconds: float) -> None:
    header("endpoints: the metrics server under attack (120 connections per kind), /healthz meanwhile")
    print(f"server bounds: headers {SERVING_LIMITS.max_header_bytes} bytes / {SERVING_LIMITS.max_header_lines} lines, "
          f"header timeout {SERVING_LIMITS.header_timeout:g}s, idle {SERVING_LIMITS.idle_timeout:g}s, "
          f"{SERVING_LIMITS.max_connections} connections (reserve {SERVING_LIMITS.reserve}), "
          f"{SERVING_LIMITS.max_buffered_bytes >> 20} MB of headers held in all")
    insecure = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    for scheme in ("http", "https"):
        for kinds in (("idle",), ("slow-loris",), ("header-stuffing",), ("idle", "slow-loris", "header-stuffing")):
            tls = insecure if scheme == "https" else None
            with metrics_server_child(certificate if scheme == "https" else None) as child:
                with attacking(child.port, [(k, 120) for k in kinds], tls=tls is not None) as refused:
                    probes = probe_for(f"{scheme}://127.0.0.1:{child.port}/healthz", seconds, tls)
                rss = peak_rss(child.pid)
            evicted = child.evicted
            latencies = sorted(p.seconds for p in probes)
            failed = sum(p.status != 200 for p in probes)
            p50 = statistics.median(latencies)
            p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
            row(f"{scheme} {'+'.join(kinds)}", f"{failed}!" if failed else "ok", latencies[-1], rss,
                f"/healthz <{PROBE_SECONDS:g}s, <{SERVER_RSS >> 20}MB",
                f"{len(probes)} probes p50 {p50 * 1000:.0f} ms p99 {p99 * 1000:.0f} ms max "
                f"{latencies[-1] * 1000:.0f} ms; evicted {evicted}, refused while opening {refused}")




# -- answers -----------------------------------------------------------------------------------------------

CLIENT_CHILD = """
import sys
from cvo_py.runtime.promapi import APIError, PrometheusAPI
from updateservice.client import FetchError, fetch_graph
url = sys.argv[1]
try:
    PrometheusAPI(url.removesuffix("/path")).alerts()
    print("alerts: no error")
except APIError as exc:
    print(f"alerts: {len(str(exc))} chars: {exc}"[:300])
try:
    fetch_graph(url, user_agent="bench")
    print("graph: no error")
except FetchError as exc:
    print(f"graph: {exc.reason}: {len(str(exc))} chars: {exc}"[:300])
"""


def answers() -> None:
    header("answers: the alerts API's and the update service's clients against bad servers (one child each)")
    for behaviour in (*BEHAVIOURS, "redirect-to:http://[::1", "redirect-to:ftp://x/"):
        with HostileServer(behaviour) as server:
            result = run_limited([sys.executable, "-c", CLIENT_CHILD, server.url], cwd=REPO, timeout=120,
                                 memory_bytes=MEMORY_LIMIT)
        lines = result.stdout.splitlines() or [result.stderr.strip()[-200:]]
        row(behaviour, "hang" if result.timed_out else result.returncode, result.seconds, result.peak_rss_bytes,
            f"<{ANSWER_SECONDS:g}s, <{ANSWER_RSS >> 20}MB", " | ".join(line[:60] for line in lines))


def main() -> int:
    if sys.argv[1:2] == ["--write"]:
        large_snapshot(Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "yaml")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated: {', '.join(SECTIONS)}")
    parser.add_argument("--large-mb", type=int, nargs="*", default=[100, 16], help="JSON -node.yaml sizes (MB)")
    parser.add_argument("--yaml-mb", type=int, nargs="*", default=[16], help="YAML -node.yaml sizes (MB)")
    parser.add_argument("--attack-seconds", type=float, default=8.0, help="how long to probe under each attack")
    args = parser.parse_args()
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    print(f"load: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f} (1, 5, 15 min)")
    with _workdir() as pki:
        certificate = self_signed(pki)
        if "snapshots" in chosen:
            snapshots(args.large_mb, args.yaml_mb)
        if "files" in chosen:
            files(certificate)
        if "flags" in chosen:
            flags(certificate)
        if "endpoints" in chosen:
            endpoints(certificate, args.attack_seconds)
        if "answers" in chosen:
            answers()
    return 0


if __name__ == "__main__":
    sys.exit(main())
