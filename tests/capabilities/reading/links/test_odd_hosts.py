"""Addresses written with other Unicode digits and full stops, against real local servers.

`http://１２７。0。0。①/` is the literal 127.0.0.1 by the time aiohttp connects (yarl maps
the host first), so it never reaches the guarded resolver; the connector checks the
address each socket opens to, whatever any check of the URL made of the host as written.
"""

from __future__ import annotations

import aiohttp
import pytest
import yarl

from bot.capabilities.reading.links import LinkFailure, read_links
from bot.capabilities.reading.links.fetch import open_session
from providers.http_transport import connection_refusal
from tests.capabilities.reading.links.servers import (
    INTERNAL,
    PUBLIC_STAND_IN,
    PageServer,
    policy_with,
)
from tests.support.data_odd_hosts import spellings

SECRET = "<html><body><p>the internal secret page</p></body></html>"

LOOPBACK = spellings(INTERNAL)
REFUSED = [pytest.param(reason, host, id=f"{address} {name}")
           for reason, address in [("private_address", "10.0.0.1"), ("private_address", "192.168.1.20"),
                                   ("blocked_address", "169.254.169.254")]
           for name, host in spellings(address)]


def _ids(cases: list[tuple[str, str]]) -> list[str]:
    return [name for name, _host in cases]


@pytest.fixture
async def internal():
    async with PageServer(host=INTERNAL) as server:
        server.page("/secret", SECRET)
        yield server


@pytest.fixture
async def public():
    async with PageServer(host=PUBLIC_STAND_IN) as server:
        yield server


async def _one(url: str) -> LinkFailure:
    reading = await read_links(url, policy_with(timeout=3.0))
    [result] = reading.results
    assert isinstance(result, LinkFailure), result
    return result


@pytest.mark.parametrize(("name", "host"), LOOPBACK, ids=_ids(LOOPBACK))
async def test_loopback_in_odd_digits_is_refused(internal, name, host):
    assert yarl.URL(f"http://{host}/").raw_host == INTERNAL  # what the client would connect to
    result = await _one(f"http://{host}:{internal.port}/secret")
    assert result.reason == "private_address", result
    assert "127.0.0.1 is a loopback address" in result.detail
    assert internal.seen == []


@pytest.mark.parametrize(("reason", "host"), REFUSED)
async def test_private_and_metadata_in_odd_digits_are_refused(reason, host):
    """Refused before any connection is tried (a private address here would only time out)."""
    result = await _one(f"http://{host}/admin")
    assert result.reason == reason, result


@pytest.mark.parametrize(("name", "host"), LOOPBACK, ids=_ids(LOOPBACK))
async def test_a_redirect_to_loopback_in_odd_digits_is_refused(public, internal, name, host):
    public.redirect("/go", f"http://{host}:{internal.port}/secret")
    result = await _one(public.url("/go"))
    assert result.reason == "private_address", result
    assert public.paths == ["/go"]
    assert internal.seen == []


@pytest.mark.parametrize("host", ["169。254。169。254", "①⑥⑨.②⑤④.①⑥⑨.②⑤④"])
async def test_a_redirect_to_metadata_in_odd_digits_is_refused(public, host):
    public.redirect("/go", f"http://{host}/latest/meta-data/")
    result = await _one(public.url("/go"))
    assert result.reason == "blocked_address", result


@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/secret", "http://１２７。0。0。1:{port}/secret"])
async def test_a_literal_address_is_checked_when_the_connection_is_made(internal, url):
    """The link session's connector refuses on its own: no check of the URL runs here."""
    async with open_session(policy_with()) as session:
        with pytest.raises(aiohttp.ClientError) as caught:
            await session.get(url.format(port=internal.port))
    refused = connection_refusal(caught.value)
    assert refused is not None and refused.reason == "private"
    assert "127.0.0.1 is a loopback address" in str(refused)
    assert internal.seen == []


async def test_the_public_stand_in_is_still_reached_through_the_same_connector(public):
    public.page("/ok", "plain words", "text/plain")
    reading = await read_links(public.url("/ok").replace(PUBLIC_STAND_IN, "127。0。0。2"), policy_with())
    [result] = reading.results
    assert getattr(result, "text", None) == "plain words", result
