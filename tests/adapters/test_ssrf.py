"""Server-side request forgery through provider requests, with the real SDKs on local servers.

Redirects are never followed (every provider), and the custom provider's connections
are re-checked against the address resolved at connection time (rebinding, metadata
and container credential addresses).

Every server here listens on loopback, which the custom provider refuses. So the tests
give the adapter an `EndpointPolicy` with a fixed resolver table for names under the
reserved `.test` domain and admit one exact address as the stand-in for a public
server: 127.0.0.2 (`also_allowed`). 127.0.0.1, where the "internal" replay server
listens, stays refused like any loopback address. System DNS cannot resolve `.test`
names, so a request that gets through proves the client connected to the address the
policy checked and did not look the name up again.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Any

import aiohttp
import httpcore2
import pytest
from aiohttp import web

from providers import create_adapter, http_transport
from providers.endpoint_check import (
    EndpointPolicy,
    EndpointRejected,
    IPAddress,
    check_custom_endpoint,
)
from providers.http_transport import TRANSPORTS
from providers.safe_transport import AddressRefused, GuardedBackend, RedirectRefused
from providers.types import ProviderError
from tests.support import data_openai as fx
from tests.support.data_odd_hosts import spellings
from tests.support.drive_adapter import error_of, served_outcome
from tests.support.fake_provider_server import ProviderReplayServer, Reply

PUBLIC_STAND_IN = "127.0.0.2"


class TableResolver:
    """Answers from a table, one answer list per call (the last one repeats); records calls."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        answers = self.table.get(host)
        if answers is None:
            raise EndpointRejected("unresolvable", f"The host {host} could not be resolved (not in the table).")
        turn = min(sum(1 for h in self.calls if h == host), len(answers) - 1)
        self.calls.append(host)
        return [ipaddress.ip_address(a) for a in answers[turn]]


def policy_with(table: dict[str, list[list[str]]], *, allow_private: bool = False) -> EndpointPolicy:
    return EndpointPolicy(
        allow_private=allow_private,
        also_allowed=frozenset({ipaddress.ip_address(PUBLIC_STAND_IN)}),
        resolver=TableResolver(table),
    )


class Redirector:
    """An endpoint on the public stand-in that answers every POST with a redirect."""

    def __init__(self, location: str, status: int = 307) -> None:
        self.location = location
        self.status = status
        self.hits: list[str] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        self.hits.append(request.path)
        return web.Response(status=self.status, headers={"Location": self.location})

    async def __aenter__(self) -> Redirector:
        app = web.Application()
        app.router.add_route("POST", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, PUBLIC_STAND_IN, 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@pytest.fixture(autouse=True, params=TRANSPORTS)
def transport(request, monkeypatch):
    """Every test here runs on both transports the SDK clients can send through."""
    monkeypatch.setattr(http_transport, "DEFAULT_TRANSPORT", request.param)
    return request.param


@pytest.fixture
async def internal():
    """The server a forged request would reach (127.0.0.1); its request log must stay empty."""
    async with ProviderReplayServer() as server:
        server.reply(Reply(body=fx.sse_body(fx.TEXT)))
        yield server


async def _stream_error(provider: str, base_url: str, **options: Any) -> ProviderError:
    return await error_of(create_adapter(provider, api_key="sk-ssrf", model="m-test", base_url=base_url,
                                         timeout=5.0, **options))


def _assert_refused_redirect(error: ProviderError, status: int = 307) -> None:
    assert isinstance(error.original_error, RedirectRefused)
    assert (error.type, error.retryable) == ("api_error", False)
    assert f"answered with a redirect (HTTP {status}" in error.message
    assert "refused" in error.message
    assert "/v1/chat" not in error.message and "secret" not in error.message


# ---- (a) redirects ---------------------------------------------------------------------------
@pytest.mark.parametrize("target", [
    "http://127.0.0.1:{port}/v1/chat/completions?secret=1",
    "http://internal.test:{port}/v1/chat/completions?secret=1",
])
async def test_custom_redirect_to_loopback_is_refused(internal, target):
    location = target.format(port=internal.port)
    policy = policy_with({"api.public.test": [[PUBLIC_STAND_IN]], "internal.test": [["127.0.0.1"]]})
    async with Redirector(location) as public:
        error = await _stream_error("custom", f"http://api.public.test:{public.port}/v1",
                                    endpoint_policy=policy)
    assert public.hits == ["/v1/chat/completions"]
    _assert_refused_redirect(error)
    assert internal.requests == []


@pytest.mark.parametrize("status", [301, 302, 303, 308])
async def test_custom_redirect_refused_for_every_redirect_status(internal, status):
    policy = policy_with({"api.public.test": [[PUBLIC_STAND_IN]]})
    async with Redirector(f"{internal.url}/v1/chat/completions", status) as public:
        error = await _stream_error("custom", f"http://api.public.test:{public.port}/v1",
                                    endpoint_policy=policy)
    _assert_refused_redirect(error, status)
    assert internal.requests == []


@pytest.mark.parametrize("provider,root", [
    ("openai", "/v1"), ("openrouter", "/v1"), ("anthropic", ""), ("google", ""),
])
async def test_no_provider_follows_a_redirect(internal, provider, root):
    """Built-in providers are not address-checked, but none of them follows a redirect."""
    async with Redirector(f"{internal.url}/v1/chat/completions?secret=1") as public:
        error = await _stream_error(provider, f"http://{PUBLIC_STAND_IN}:{public.port}{root}")
    assert len(public.hits) == 1
    _assert_refused_redirect(error)
    assert internal.requests == []


# ---- the connection-time check ----------------------------------------------------------------
async def test_allowed_address_is_reached_through_the_checked_address(internal):
    policy = policy_with({"api.public.test": [["127.0.0.1"]]}, allow_private=True)
    out = await served_outcome(internal, "custom", base_url=f"http://api.public.test:{internal.port}/v1",
                               endpoint_policy=policy)
    assert out.error is None and out.text == "Hello!"
    assert len(internal.requests) == 1
    assert policy.resolver.calls == ["api.public.test"]


async def test_loopback_refused_at_connection_time(internal):
    policy = policy_with({"internal.test": [["127.0.0.1"]]})
    error = await _stream_error("custom", f"http://internal.test:{internal.port}/v1",
                                endpoint_policy=policy)
    assert isinstance(error.original_error, AddressRefused)
    assert (error.type, error.retryable) == ("api_error", False)
    assert "127.0.0.1 is a loopback address" in error.message
    assert internal.requests == []


async def test_custom_without_a_policy_refuses_private_addresses(internal):
    error = await _stream_error("custom", f"{internal.url}/v1")
    assert isinstance(error.original_error, AddressRefused)
    assert "loopback" in error.message
    assert internal.requests == []


# ---- (b) DNS rebinding ------------------------------------------------------------------------
async def test_rebinding_refused_at_connection_time(internal):
    policy = policy_with({"rebind.test": [["93.184.216.34"], ["127.0.0.1"]]})
    base_url = f"http://rebind.test:{internal.port}/v1"
    checked = await check_custom_endpoint(base_url, policy=policy)  # when /model endpoint runs
    assert checked.addresses == ("93.184.216.34",)
    error = await _stream_error("custom", base_url, endpoint_policy=policy)
    assert isinstance(error.original_error, AddressRefused)
    assert (error.type, error.retryable) == ("api_error", False)
    assert "127.0.0.1 is a loopback address" in error.message
    assert policy.resolver.calls == ["rebind.test", "rebind.test"]
    assert internal.requests == []


async def test_one_private_answer_among_public_ones_is_refused(internal):
    policy = policy_with({"mixed.test": [["93.184.216.34", "127.0.0.1"]]})
    error = await _stream_error("custom", f"http://mixed.test:{internal.port}/v1",
                                endpoint_policy=policy)
    assert isinstance(error.original_error, AddressRefused)
    assert internal.requests == []


async def test_unresolvable_name_at_connection_time_is_a_connection_failure(internal):
    policy = policy_with({})
    error = await _stream_error("custom", f"http://gone.test:{internal.port}/v1",
                                endpoint_policy=policy)
    assert not isinstance(error.original_error, AddressRefused)
    assert "gone.test could not be resolved" in error.message
    assert internal.requests == []


# ---- (c) metadata and container credential addresses, even with private allowed -----------------
CREDENTIAL_ANSWERS = ["169.254.170.23", "fd00:ec2::23", "169.254.170.2", "::ffff:169.254.170.23"]
METADATA_ANSWERS = ["169.254.169.254", "fd00:ec2::254", "::ffff:169.254.169.254"]


@pytest.mark.parametrize("answer", CREDENTIAL_ANSWERS + METADATA_ANSWERS)
async def test_credential_and_metadata_addresses_refused_at_connection_time(internal, answer):
    policy = policy_with({"creds.test": [[answer]]}, allow_private=True)
    error = await _stream_error("custom", f"http://creds.test:{internal.port}/v1",
                                endpoint_policy=policy)
    assert isinstance(error.original_error, AddressRefused)
    assert error.original_error.reason == "metadata"
    assert (error.type, error.retryable) == ("api_error", False)
    label = "container credential" if answer in CREDENTIAL_ANSWERS else "cloud metadata"
    assert f"is a {label} address" in error.message


@pytest.mark.parametrize("host", ["169.254.170.23", "[fd00:ec2::23]"])
async def test_credential_literals_refused_at_connection_time(internal, host):
    """A literal address skips the resolver but not the check (the port is the replay server's)."""
    error = await _stream_error("custom", f"http://{host}:{internal.port}/v1",
                                endpoint_policy=EndpointPolicy(allow_private=True))
    assert isinstance(error.original_error, AddressRefused)
    assert "container credential address" in error.message


# ---- (d) an address written with other digits or full stops: the host as the client sees it ------
ODD_LOOPBACK = spellings("127.0.0.1")
ODD_IDS = [name for name, _host in ODD_LOOPBACK]


@pytest.mark.parametrize(("name", "host"), ODD_LOOPBACK, ids=ODD_IDS)
async def test_setting_an_endpoint_with_loopback_in_odd_digits_is_refused(name, host):
    """The check reads the host as yarl/IDNA hands it to the client (no resolver needed)."""
    with pytest.raises(EndpointRejected) as caught:
        await check_custom_endpoint(f"http://{host}:8000/v1", policy=policy_with({}))
    assert caught.value.reason == "private"
    assert "127.0.0.1 is a loopback address" in str(caught.value)


@pytest.mark.parametrize(("name", "host"), ODD_LOOPBACK, ids=ODD_IDS)
async def test_custom_requests_to_loopback_in_odd_digits_never_arrive(internal, name, host):
    error = await _stream_error("custom", f"http://{host}:{internal.port}/v1", endpoint_policy=policy_with({}))
    assert error.retryable is False
    assert internal.requests == []


@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/v1/chat/completions",
                                 "http://１２７。0。0。1:{port}/v1/chat/completions"])
async def test_the_guarded_connector_checks_a_literal_when_connecting(internal, url):
    """With no check of the URL before it, the connector alone refuses the socket."""
    async with aiohttp.ClientSession(connector=http_transport.GuardedConnector(policy_with({}))) as session:
        with pytest.raises(aiohttp.ClientError) as caught:
            await session.post(url.format(port=internal.port), json={})
    refused = http_transport.connection_refusal(caught.value)
    assert refused is not None and refused.reason == "private"
    assert internal.requests == []


async def test_the_guarded_connector_reaches_a_literal_the_policy_allows(internal):
    connector = http_transport.GuardedConnector(policy_with({}, allow_private=True))
    async with aiohttp.ClientSession(connector=connector) as session:
        async with session.post(f"http://127。0。0。1:{internal.port}/v1/chat/completions", json={}) as response:
            assert response.status == 200
    assert len(internal.requests) == 1


class RecordingBackend(httpcore2.AsyncNetworkBackend):
    """The real AnyIO backend, recording where it is asked to connect."""

    def __init__(self) -> None:
        self.inner = httpcore2.AnyIOBackend()
        self.targets: list[tuple[str, int]] = []

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        self.targets.append((host, port))
        return await self.inner.connect_tcp(host, port, timeout=timeout, local_address=local_address,
                                            socket_options=socket_options)


@pytest.mark.parametrize("answer", ["169.254.170.23", "fd00:ec2::23"])
async def test_refused_address_is_never_connected_to(answer):
    recording = RecordingBackend()
    backend = GuardedBackend(policy_with({"creds.test": [[answer]]}, allow_private=True), recording)
    with pytest.raises(AddressRefused):
        await backend.connect_tcp("creds.test", 80, timeout=1.0)
    assert recording.targets == []


async def test_backend_connects_to_the_checked_address_not_the_name(internal):
    recording = RecordingBackend()
    backend = GuardedBackend(policy_with({"pinned.test": [["127.0.0.1"]]}, allow_private=True), recording)
    stream = await backend.connect_tcp("pinned.test", internal.port, timeout=1.0)
    await stream.aclose()
    assert recording.targets == [("127.0.0.1", internal.port)]
