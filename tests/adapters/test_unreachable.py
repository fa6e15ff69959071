"""A provider nobody answers at is `unreachable`: its own kind, title and tips, never "check the key".

Real parts: each family's official SDK, on both HTTP transports, pointed at a loopback port
nothing listens on (connection refused) or a name that does not resolve.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest

from bot.errors import ErrorScene, resolve_presentation
from bot.turn.policy import plan_next
from providers import create_adapter, http_transport
from providers.endpoint_check import EndpointPolicy, EndpointRejected
from tests.support.drive_adapter import connection, error_of

TRANSPORTS = ("aiohttp", "httpx2")


@pytest.fixture(params=TRANSPORTS)
def transport(request, monkeypatch):
    monkeypatch.setattr(http_transport, "DEFAULT_TRANSPORT", request.param)
    return request.param


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _error(provider: str, url: str, **options):
    return await error_of(create_adapter(provider, **{**connection(provider, url), "timeout": 5.0, **options}))


def _assert_unreachable(error, provider: str) -> None:
    assert error.kind == "unreachable", (error.kind, error.message)
    assert error.provider == provider
    step = plan_next(error, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert (step.action, step.scope, step.cool_down_until) == ("next_model", "model", None)
    shown = resolve_presentation(error, ErrorScene(locale="en", credential_source="server"))
    assert shown.title_key == "genai.stream.unreachable_title"
    assert "could not connect" in shown.headline
    assert shown.tip_keys[0] == "genai.tips.check_server_running"
    assert not any("verify_api_key" in key for key in shown.tip_keys)


@pytest.mark.parametrize("provider", ["custom", "openai", "anthropic", "google"])
async def test_connection_refused_is_unreachable(transport, provider):
    error = await _error(provider, f"http://127.0.0.1:{_closed_port()}")
    _assert_unreachable(error, provider)


async def test_a_name_that_does_not_resolve_is_unreachable(transport):
    async def nowhere(host: str, port: int):
        raise EndpointRejected("unresolvable", f"The host {host} could not be resolved.")

    policy = EndpointPolicy(allow_private=True, resolver=nowhere)
    error = await _error("custom", "http://gone.invalid:8080", endpoint_policy=policy)
    _assert_unreachable(error, "custom")
    shown = resolve_presentation(error, ErrorScene(locale="en", credential_source="server"))
    assert "genai.tips.check_endpoint_address" in shown.tip_keys
