"""Malformed values for every kind of flag the commands take, and the files some of them name.

`MALFORMED[kind]` lists values a flag of that kind must refuse (exit 2, one escaped line, before
anything runs). `{NAME}` stands for a file `materialize()` writes (a kubeconfig whose server is
`http://[::1`, a CA file that is not PEM, a 17 MiB sparse file, ...). The tests classify every
flag of every subcommand by kind, so a new flag without a kind fails them, and a kind's values
are the class each of its flags is tried with. Special files (FIFOs, `/dev/zero`) are in
`files.py`: those run in a bounded child.
"""

from __future__ import annotations

import base64
from pathlib import Path

from testkit.corpus.files import kubeconfig

ESC = "\x1b]0;owned\x07\x1b[2J\u202e"  # retitles and clears a terminal, then reverses the text
LONG = "x" * 100_000

_URLS = (
    "http://[::1",
    "http://[::1]:99999",
    "http://127.0.0.1:99999",
    "http://127.0.0.1:0",
    "http://127.0.0.1:port",
    "ftp://127.0.0.1",
    "http://",
    "127.0.0.1:9091",
    "http://a b",
    "http://x/%zz",
    "http://x" + ESC,
    "http://" + LONG,
)

MALFORMED: dict[str, tuple[str, ...]] = {
    "kubeconfig": (
        "",
        "{MISSING}",
        "{DIR}",
        "{GARBAGE}",
        "{LIST}",
        "{EMPTYCONFIG}",
        "{ESC_PATH}",
        "{HUGE}",
        "{KC_SERVER_BRACKET}",
        "{KC_SERVER_PORT}",
        "{KC_SERVER_FTP}",
        "{KC_SERVER_NO_HOST}",
        "{KC_SERVER_ESC}",
        "{KC_CA_NOT_PEM}",
        "{KC_CA_MISSING}",
        "{KC_CA_DATA_NOT_PEM}",
        "{KC_TOKEN_NEWLINE}",
        "{KC_TOKEN_FILE_MISSING}",
        "{KC_CLIENT_CERT_NOT_PEM}",
    ),
    "verbosity": ("loud", "-1", "", "\u0663", "99999999999", ESC, LONG),
    "listen": (
        "garbage",
        "9099",
        ":99999",
        ":-1",
        "host:",
        "a b:80",
        "::1:80",
        "[not-an-ip]:80",
        "[127.0.0.1]:80",
        "0.0.0.0:\uff18\uff10",
        "300.1.1.1:80",
        "bad-.example:80",
        "host" + ESC + ":80",
        LONG + ":80",
    ),
    "serving-file": ("{MISSING}", "{DIR}", "{GARBAGE}", "{EMPTY}", "{ESC_PATH}", "{HUGE}"),
    "ca-file": ("{MISSING}", "{DIR}", "{GARBAGE}", "{EMPTY}", "{FAKE_PEM}", "{ESC_PATH}", "{HUGE}"),
    "token-file": ("{MISSING}", "{DIR}", "{TOKEN_SPACES}", "{TOKEN_CONTROL}", "{TOKEN_BINARY}", "{ESC_PATH}", "{HUGE}"),
    "optional-http-url": _URLS,  # empty means none (or the default), so "" is not malformed here
    "duration": (
        "abc", "", "0", "-5", "-5s", "nan", "inf", "1e9", "1e400", "1e-300", "0.001", "15ss", "\uff11\uff15",
        " 15", "1_0", "1d", ESC, LONG,
    ),
    # non-ASCII letters and digits pass str.islower/isalnum: the API server refuses them
    "dns-label": ("", "Bad_NS", "-ns", "ns-", "a.b", "a" * 64, "caf\u00e9", "\u0663", "\uff41", ESC, LONG),
    "node-name": ("", "Node_1", "UPPER", "-a", "a..b", "a" * 254, ESC, LONG),
    "pull-spec": ("", "a b", "quay.io/x\t", "quay.io/" + ESC, "quay.io/\u00e9"),
    "go-bool": ("maybe", "", "yes", "tRuE", "true", ESC),
    "capabilities": ("Zed", ",,,", "Ingress,", ",Ingress", "Ingress,,Console", ESC, LONG),
    "cipher-suites": ("NOPE", ",,,", "TLS_AES_128_GCM_SHA256,", ",TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", ESC, LONG),
    "tls-version": ("VersionTLS99", "1.2", "TLS1.3", "versiontls12", ESC, LONG),
    "details": ("bogus", "", "ALL", ESC, LONG),
    "format": ("bogus", "", "Snapshot", ESC, LONG),
    "source": ("bogus", "", "Cluster", "controller,cluster", ESC, LONG),
    "rfc3339": ("yesterday", "", "\uff12\uff10\uff12\uff13-11-01T00:00:00Z", "2023-11-01T00:00:00+25:00", ESC, LONG),
    "snapshot-path": ("", "x.yaml", "{MISSING_CV}", "{DIR_CV}", "{ESC_CV}", "{HUGE_CV}"),
    "dump-path": ("", "{MISSING}", "{DIR}", "{GARBAGE}", "{ESC_PATH}", "/dev/null", "{MISSING_CV}", "{HUGE_CV}"),
}

# The smallest valid command line of each subcommand, so the flag under test is the only problem.
BASE = {
    "start": ["--node-name", "n", "--release-image", "x", "--listen", ""],
    "update-status-controller": ["--listen", ""],
    "upgrade-status": [],
    "version": ["--client"],
}
SUBCOMMANDS = tuple(BASE)
SERVING = ("start", "update-status-controller")

# The kind of every value-taking flag of every subcommand (`MALFORMED` above lists
# what each kind must refuse), and the switches, which take no value. A flag missing here fails
# tests/cvo_py/cli/test_flags.py: a new flag is tried with its class's malformed values.
FLAG_KINDS: dict[tuple[str, str], str] = {
    **{(sub, "--kubeconfig"): "kubeconfig" for sub in SUBCOMMANDS},
    **{(sub, "--v"): "verbosity" for sub in SUBCOMMANDS},
    **{(sub, "-v"): "verbosity" for sub in SUBCOMMANDS},
    **{(sub, "--listen"): "listen" for sub in SERVING},
    **{(sub, flag): "serving-file" for sub in SERVING for flag in ("--serving-cert-file", "--serving-key-file")},
    **{(sub, "--tls-min-version"): "tls-version" for sub in SERVING},
    **{(sub, "--tls-cipher-suites"): "cipher-suites" for sub in SERVING},
    ("start", "--release-image"): "pull-spec",
    ("start", "--node-name"): "node-name",
    ("start", "--enable-auto-update"): "go-bool",
    ("start", "--update-service"): "optional-http-url",
    ("start", "--promql-url"): "optional-http-url",
    ("start", "--promql-ca-file"): "ca-file",
    ("start", "--promql-token-file"): "token-file",
    ("start", "--always-enable-capabilities"): "capabilities",
    **{(sub, "--namespace"): "dns-label" for sub in ("update-status-controller", "upgrade-status")},
    **{
        ("update-status-controller", flag): "duration"
        for flag in (
            "--leader-elect-lease-duration",
            "--leader-elect-renew-deadline",
            "--leader-elect-retry-period",
            "--resync",
            "--alerts-interval",
        )
    },
    ("update-status-controller", "--alerts-url"): "optional-http-url",
    ("update-status-controller", "--alerts-ca-file"): "ca-file",
    ("update-status-controller", "--alerts-token-file"): "token-file",
    ("upgrade-status", "--details"): "details",
    ("upgrade-status", "--format"): "format",
    ("upgrade-status", "--source"): "source",
    ("upgrade-status", "--now"): "rfc3339",
    ("upgrade-status", "--mock-clusterversion"): "snapshot-path",
    ("upgrade-status", "--from"): "dump-path",
}
SWITCHES = {
    **{(sub, flag): "switch" for sub in SUBCOMMANDS for flag in ("-h", "--help")},
    ("update-status-controller", "--leader-elect"): "switch",
    ("update-status-controller", "--no-leader-elect"): "switch",
    ("version", "--client"): "switch",
    ("start", "--use-dns-for-services"): "switch",
    ("upgrade-status", "--watch"): "switch",
}
# Flags that only matter beside others: what each kind's flag is tried with.
CONTEXT = {
    "listen": ["--serving-cert-file", "{CERT}", "--serving-key-file", "{KEY}"],  # so the address is what is wrong
    "serving-file": ["--listen", "127.0.0.1:0", "--serving-cert-file", "{CERT}", "--serving-key-file", "{KEY}"],
    "format": ["--from", "{DIR}"],
}
# What the one line must mention, by kind: the flag's problem, not another one found first.
MENTIONS = {
    "kubeconfig": r"(?i)kubeconfig|Kubernetes configuration",
    "verbosity": r"verbosity",
    "listen": r"--listen",
    "serving-file": r"--serving-(cert|key)-file",
    "ca-file": r"-ca-file",
    "token-file": r"-token-file",
    "optional-http-url": r"-url|--update-service",
    "duration": r"invalid duration",
    "dns-label": r"--namespace",
    "node-name": r"node-name",
    "pull-spec": r"release-image",
    "go-bool": r"--enable-auto-update",
    "capabilities": r"--always-enable-capabilities",
    "cipher-suites": r"cipher suite",
    "tls-version": r"TLS version",
    "details": r"--details",
    "format": r"--format",
    "source": r"--source",
    "rfc3339": r"--now",
    "snapshot-path": r"-cv\.yaml|snapshots|mock-clusterversion",
    "dump-path": r".",
    "switch": r"ignored explicit argument",
}


# Boolean flags take no value: `--flag=value` is refused.
SWITCH_VALUES = ("yes", "maybe", ESC)



def cases() -> list[tuple[str, str, str, str]]:
    """(subcommand, flag, kind, value) for every flag and every malformed value of its kind
    (`-v` is `--v`'s other name; `-h`, `--help`'s)."""
    return [
        (sub, flag, kind, value)
        for (sub, flag), kind in FLAG_KINDS.items()
        if flag != "-v"
        for value in MALFORMED[kind]
    ] + [(sub, flag, "switch", f"={value}") for (sub, flag) in SWITCHES if flag != "-h" for value in SWITCH_VALUES]


def argv(sub: str, flag: str, kind: str, value: str, files: dict[str, str]) -> list[str]:
    """The command line trying `value` for `flag`: the subcommand's smallest valid one, what the
    flag needs beside it, then the flag; `{NAME}`s are `files`' (see `materialize`)."""
    def filled(arg: str) -> str:
        return arg.format(**files) if arg.startswith("{") and arg.endswith("}") else arg

    if kind == "switch":
        return [sub, *BASE[sub], flag + value]
    # `--flag=VALUE`: a value starting with "-" is the flag's, not another flag
    return [sub, *BASE[sub], *(filled(a) for a in CONTEXT.get(kind, [])), f"{flag}={filled(value)}"]


_PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def materialize(directory: Path) -> dict[str, str]:
    """Write the files the `{NAME}` placeholders stand for; returns NAME → path."""
    d = directory
    files: dict[str, str] = {"MISSING": str(d / "missing"), "DIR": str(d), "ESC_PATH": str(d / f"x{ESC}")}

    def write(name: str, data: str | bytes) -> None:
        path = d / name.lower()
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        files[name] = str(path)

    write("GARBAGE", "{[ not: yaml")
    write("LIST", "- a\n- b\n")
    write("EMPTYCONFIG", "apiVersion: v1\nkind: Config\n")
    write("EMPTY", "")
    write("FAKE_PEM", _PEM)
    write("TOKEN_SPACES", "two words\n")
    write("TOKEN_CONTROL", "tok\x1b[2Jen\r\nX-Injected: 1\n")
    write("TOKEN_BINARY", b"\xff\xfe\x00token")
    huge = d / "huge"
    with open(huge, "wb") as f:  # sparse: refused by size before a byte is read, takes no disk
        f.truncate(17 << 20)
    files["HUGE"] = str(huge)
    for name, cluster, user in (
        ("KC_SERVER_BRACKET", {"server": "https://[::1", "insecure-skip-tls-verify": True}, None),
        ("KC_SERVER_PORT", {"server": "https://127.0.0.1:99999", "insecure-skip-tls-verify": True}, None),
        ("KC_SERVER_FTP", {"server": "ftp://127.0.0.1", "insecure-skip-tls-verify": True}, None),
        ("KC_SERVER_NO_HOST", {"server": "https://", "insecure-skip-tls-verify": True}, None),
        ("KC_SERVER_ESC", {"server": "https://x" + ESC, "insecure-skip-tls-verify": True}, None),
        ("KC_CA_NOT_PEM", {"server": "https://127.0.0.1:6443", "certificate-authority": "garbage"}, None),
        ("KC_CA_MISSING", {"server": "https://127.0.0.1:6443", "certificate-authority": "no-such-ca.crt"}, None),
        (
            "KC_CA_DATA_NOT_PEM",
            {"server": "https://127.0.0.1:6443", "certificate-authority-data": base64.b64encode(b"junk").decode()},
            None,
        ),
        ("KC_TOKEN_NEWLINE", None, {"token": "abc\r\nX-Injected: 1"}),
        ("KC_TOKEN_FILE_MISSING", None, {"tokenFile": "no-such-token"}),
        ("KC_CLIENT_CERT_NOT_PEM", None, {"client-certificate": "garbage", "client-key": "garbage"}),
    ):
        files[name] = str(kubeconfig(d, name.lower(), cluster=cluster, user=user))
    cv = d / "snapshots"
    cv.mkdir()
    (cv / "dir-cv.yaml").mkdir()
    files["MISSING_CV"] = str(cv / "missing-cv.yaml")
    files["DIR_CV"] = str(cv / "dir-cv.yaml")
    files["ESC_CV"] = str(cv / f"x{ESC}-cv.yaml")
    with open(cv / "huge-cv.yaml", "wb") as f:
        f.truncate(65 << 20)
    files["HUGE_CV"] = str(cv / "huge-cv.yaml")
    return files
