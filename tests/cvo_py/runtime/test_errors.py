"""cvo_py.runtime.errors: every error the runtime raises about a client, a server or a
configuration sits on exactly one branch of the one root, and the errors that say what is wrong
with a text (a timestamp, a quoted string, a document) stay ValueErrors of their parser."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import cvo_py.runtime
from cvo_py.runtime.errors import ClientError, ConfigError, CvoError, ServerError
from updateservice import client as updateservice_client

BRANCHES = (ClientError, ServerError, ConfigError)
# Errors about a text that does not parse (raised by pure readers, caught as ValueError by the
# code that reads a file or a field): not a client, server or configuration error.
PARSING = {
    "cvo_py.runtime.docbounds.DocumentError",
    "cvo_py.runtime.safeload.FileMissing",
    "cvo_py.runtime.semver.SemverError",
    "cvo_py.runtime.gotext.base64std.Base64Error",
    "cvo_py.runtime.gotext.durations.TimeFormatError",
    "cvo_py.runtime.gotext.jsoncodec.NumberRangeError",
    "cvo_py.runtime.gotext.jsoncodec.UnsupportedValue",
    "cvo_py.runtime.gotext.quoting.UnquoteError",
    "cvo_py.runtime.kubeproto.Unreadable",
}


def runtime_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of cvo_py.runtime (private ones, which only carry
    control inside their module, left out)."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(cvo_py.runtime.__path__, "cvo_py.runtime."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
                and not name.startswith("_")
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_client_server_or_configuration_error_has_one_branch() -> None:
    found = runtime_exceptions()
    assert PARSING <= set(found), sorted(PARSING - set(found))
    for name, cls in found.items():
        if name in PARSING:
            assert issubclass(cls, ValueError) and not issubclass(cls, CvoError), name
            continue
        assert issubclass(cls, CvoError), f"{name} is outside cvo_py.runtime.errors' tree"
        assert sum(issubclass(cls, branch) for branch in BRANCHES) == 1 or cls in (CvoError, *BRANCHES), name


def test_the_update_service_client_errors_are_a_client_and_a_configuration_error() -> None:
    assert issubclass(updateservice_client.FetchError, ClientError)
    assert issubclass(updateservice_client.TransportError, ConfigError)


def test_a_configuration_error_is_a_value_error_that_may_name_its_field() -> None:
    error = ConfigError("invalid URL \"x\": want http(s)://host[:port][/path]", "url")
    assert isinstance(error, ValueError)
    assert (str(error), error.field) == ("invalid URL \"x\": want http(s)://host[:port][/path]", "url")
    assert ConfigError("no usable kubeconfig").field == ""
