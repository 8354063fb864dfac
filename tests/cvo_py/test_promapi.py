"""The Prometheus/Thanos API client against a real HTTP server: answers, errors, limits."""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from cvo_py.promapi import APIError, ConfigError, PrometheusAPI
from cvo_py.testing.httpserve import Handler


def ok(data: Any) -> bytes:
    return json.dumps({"status": "success", "data": data}).encode()


ALERT = {"labels": {"alertname": "A", "severity": "warning"}, "annotations": {}, "state": "firing", "activeAt": "x"}


def test_alerts_sends_the_token_read_at_each_request(http_server: Callable[[Handler], str], tmp_path: Path) -> None:
    seen: list[str | None] = []

    def handler(req: BaseHTTPRequestHandler) -> tuple[int, bytes]:
        seen.append(req.headers.get("Authorization"))
        return 200, ok({"alerts": [ALERT]}) if req.path == "/api/v1/alerts" else (404, b"{}")

    token = tmp_path / "token"
    token.write_text("one\n")
    api = PrometheusAPI(http_server(handler) + "/", token_file=str(token))
    assert api.alerts() == [ALERT]
    token.write_text("two")
    api.alerts()
    assert seen == ["Bearer one", "Bearer two"]


def test_query_returns_the_vector(http_server: Callable[[Handler], str]) -> None:
    sample = {"metric": {"__name__": "up"}, "value": [1.5, "1"]}

    def handler(req: BaseHTTPRequestHandler) -> tuple[int, bytes]:
        assert req.path.startswith("/api/v1/query?query=up")
        return 200, ok({"resultType": "vector", "result": [sample]})

    assert PrometheusAPI(http_server(handler)).query("up") == [sample]


@pytest.mark.parametrize(
    "status,body,message",
    [
        (503, b"upstream down", "HTTP 503: not an API response: 'upstream down'"),
        (400, json.dumps({"status": "error", "error": "bad query"}).encode(), "HTTP 400: bad query"),
        (200, ok({"alerts": "nope"}), "data.alerts is not a list of objects"),
        (200, b"x" * 5000, "response larger than 4096 bytes"),
    ],
)
def test_bad_answers_are_one_line_errors(
    http_server: Callable[[Handler], str], status: int, body: bytes, message: str
) -> None:
    url = http_server(lambda _req: (status, body))
    with pytest.raises(APIError) as exc:
        PrometheusAPI(url, max_bytes=4096).alerts()
    assert str(exc.value) == f"{url}/api/v1/alerts: {message}"


def test_unreachable_and_unreadable_token_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(APIError, match=r"^http://127\.0\.0\.1:1/api/v1/alerts: .*[Cc]onnection refused") as exc:
        PrometheusAPI("http://127.0.0.1:1", timeout=2).alerts()
    assert "\n" not in str(exc.value)
    with pytest.raises(APIError, match="cannot read the bearer token file .*/missing: file not found"):
        PrometheusAPI("http://127.0.0.1:1", token_file=str(tmp_path / "missing")).alerts()


@pytest.mark.parametrize("url", ["", "ftp://x", "thanos:9091", "https://"])
def test_bad_urls_are_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="invalid URL"):
        PrometheusAPI(url)


def test_check_files_names_the_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"CA file .*/ca\.crt: file not found"):
        PrometheusAPI("https://x", ca_file=str(tmp_path / "ca.crt")).check_files()
