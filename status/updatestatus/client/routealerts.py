"""Firing alerts as `oc adm upgrade status` gets them: `GET https://<host>/api/v1/alerts`, the host
of Route `openshift-monitoring/thanos-querier`, with the user's own bearer token.

    fetch = AlertsFetch(client)       # the Route and the CA bundles are read now
    response, line = fetch.result()   # the decoded answer, or None and the line oc prints instead

TLS trusts what the API server connection trusts (the kubeconfig's CA, or the system's; nothing is
verified where the kubeconfig says `insecure-skip-tls-verify`), plus, where the reader may read
them, the cluster's service CA and default ingress CA (ConfigMaps `service-ca` and
`default-ingress-cert` in openshift-config-managed: the Route is served by the router with the
ingress certificate, and Thanos behind it with a service-CA one). The whole GET is bounded
(`TIMEOUT`, connecting included, however slowly an answer drips) and so is the body
(`MAX_BYTES`), through the project's one bounded GET (`cvo_py.runtime.httpget`, which also takes
the proxy from HTTPS_PROXY/NO_PROXY as oc's transport does).

Every failure is oc's line, printed on stdout before the status, and the status is shown
without alerts: `Unable to fetch alerts, ignoring alerts in 'Update Health':  <error>` (no Route,
no token, 401/403, TLS, a timeout, a body over the bound), or `Ignoring alerts in 'Update Health'.
Error unmarshaling alerts: %w <error>` for an answer that is not the alerts API's JSON (oc's
`%w` is printed as is).
"""

from __future__ import annotations

import functools
import json
import ssl
import threading
from collections.abc import Callable
from typing import Any

from cvo_py.runtime import tlstrust
from cvo_py.runtime.gotext.jsoncodec import decode_json, json_limit_problem, json_syntax_problem
from cvo_py.runtime.gotext.messages import bounded
from cvo_py.runtime.gotext.quoting import go_quote
from cvo_py.runtime.kube import CONFIGMAPS, ApiError, KubeClient, Resource, ServerUnreachable
from cvo_py.runtime.urls import http_url_problem
from status.updatestatus.client.live import Read

ROUTES = Resource("route.openshift.io/v1", "Route", "routes", True)
MONITORING = "openshift-monitoring"
ROUTE = "thanos-querier"
PATH = "/api/v1/alerts"
# The cluster's own CAs a Route's certificate may be signed with: (namespace, ConfigMap, key).
CLUSTER_CAS = (
    ("openshift-config-managed", "service-ca", "ca-bundle.crt"),
    ("openshift-config-managed", "default-ingress-cert", "ca-bundle.crt"),
)
TIMEOUT = 10.0  # seconds for the whole GET, connecting included
MAX_BYTES = 16 << 20  # of the answer's body (100 firing alerts take about 45 KB)
MAX_ERROR_CHARS = 300  # of a server's error text quoted in the line

UNABLE = "Unable to fetch alerts, ignoring alerts in 'Update Health':  "
UNMARSHALING = "Ignoring alerts in 'Update Health'. Error unmarshaling alerts: %w "
NO_TOKEN = "no token is currently in use for this session"


class AlertsFetch:
    """The alerts, fetched on a thread of their own from construction (the Route and CA bundles
    read first, then the GET); `result()` waits for them. With `wanted`, that thread first asks
    it (e.g. whether the ClusterVersion says Progressing, read meanwhile) and reads nothing when
    it says no (`asked` is then False): the fetch starts as soon as the answer is known, not when
    the caller gets to it."""

    def __init__(
        self,
        client: KubeClient,
        *,
        wanted: Callable[[], bool] | None = None,
        timeout: float = TIMEOUT,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self._client = client
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._closed = threading.Event()
        self._route: Read | None = None
        self._cas: list[Read] = []
        self.asked = wanted is None
        if wanted is None:
            self._start_reads()
        self._fetched = Read(functools.partial(self._fetch, wanted), closed=self._closed)

    def _start_reads(self) -> None:
        client = self._client
        self._route = Read(lambda: client.get(ROUTES, ROUTE, namespace=MONITORING), closed=self._closed)
        self._cas = [
            Read(functools.partial(client.get, CONFIGMAPS, name, namespace=ns), closed=self._closed)
            for ns, name, _ in CLUSTER_CAS
        ]

    def result(self) -> tuple[Any, str]:
        """(the decoded alerts API answer, "") or (None, the line oc prints in its place); (None,
        "") when `wanted` said no (nothing was read)."""
        answer: tuple[Any, str] = self._fetched.result()
        return answer

    def _fetch(self, wanted: Callable[[], bool] | None) -> tuple[Any, str]:
        if wanted is not None:
            if not wanted():
                return None, ""
            self.asked = True
            self._start_reads()
        assert self._route is not None
        try:
            route = self._route.result()
        except ApiError as exc:
            return None, UNABLE + route_error(exc)
        except ServerUnreachable as exc:
            return None, UNABLE + str(exc)
        url, problem = route_url(route)
        if problem:
            return None, UNABLE + problem
        authorization = self._client.config.authorization()
        if not authorization:
            return None, UNABLE + NO_TOKEN
        try:
            context = self._context()
        except tlstrust.TrustError as exc:
            return None, UNABLE + str(exc)
        from cvo_py.runtime import httpget  # urllib3: loaded only where alerts are fetched

        try:
            answer = httpget.get(
                url,
                headers={"Accept": "application/json", "Authorization": authorization},
                context=context,
                proxy=httpget.environment_proxy,
                total_timeout=self._timeout,
                max_bytes=self._max_bytes,
            )
        except httpget.GetError as exc:
            return None, UNABLE + f"Get {go_quote(exc.url or url)}: {exc}"
        if answer.status != 200:
            said = bounded(" ".join(answer.body.decode("utf-8", "replace").split()), MAX_ERROR_CHARS)
            return None, UNABLE + f"GET {url}: {answer.status} {answer.reason}: {said}".rstrip(": ")
        return decode(answer.body)

    def _context(self) -> ssl.SSLContext:
        """TLS as the API server connection has it, plus the cluster's CAs that can be read."""
        config = self._client.config
        if not config.verify:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            return context
        context = tlstrust.client_context(config.ca_file, data=config.ca_data)
        for read, (_, _, key) in zip(self._cas, CLUSTER_CAS, strict=True):
            try:
                configmap = read.result()
            except (ApiError, ServerUnreachable):
                continue  # absent, or not readable by this user: trusted without it
            data = configmap.get("data") if isinstance(configmap, dict) else None
            bundle = data.get(key) if isinstance(data, dict) else None
            if isinstance(bundle, str) and "-----BEGIN CERTIFICATE-----" in bundle:
                try:
                    context.load_verify_locations(cadata=bundle)
                except (ssl.SSLError, ValueError):
                    continue  # a bundle that does not load adds no trust
        return context


def route_error(exc: ApiError) -> str:
    """A failed GET of the Route as client-go words it: the API's own Status message, or, for an
    answer that is not a Status (no such API group), client-go's sentence naming the request."""
    if exc.reason:
        return exc.message
    if exc.status == 404:
        return f"the server could not find the requested resource (get routes.route.openshift.io {ROUTE})"
    return f"an error on the server ({exc.message or exc.status}) has prevented the request from succeeding"


def route_url(route: Any) -> tuple[str, str]:
    """(the alerts URL of the Route's host, "") or ("", why there is none)."""
    spec = route.get("spec") if isinstance(route, dict) else None
    host = spec.get("host") if isinstance(spec, dict) else None
    if not isinstance(host, str) or not host:
        return "", f'Get "https://{PATH}": http: no Host in request URL'
    url = f"https://{host}{PATH}"
    problem = http_url_problem(url)
    if problem or any(c in host for c in "/?#@"):
        return "", f"the Route {MONITORING}/{ROUTE} has a host that is not one: {go_quote(host)}"
    return url, ""


def decode(body: bytes) -> tuple[Any, str]:
    """The alerts API's answer, decoded as oc's `json.Unmarshal` takes it, or None and oc's line."""
    from status.updatestatus.insights.alerts import alerts_list, read_alert
    from status.updatestatus.insights.objects import InputError

    try:
        response = decode_json(body.decode("utf-8"))
    except UnicodeDecodeError:
        return None, UNMARSHALING + "invalid UTF-8 in the answer"
    except json.JSONDecodeError as exc:
        return None, UNMARSHALING + json_syntax_problem(exc)
    except (ValueError, RecursionError) as exc:
        return None, UNMARSHALING + json_limit_problem(exc)
    try:
        for alert in alerts_list(response):
            read_alert(alert)
    except InputError as exc:
        return None, UNMARSHALING + bounded(str(exc), MAX_ERROR_CHARS)
    return response, ""
