"""Server-side request forgery through a member's links, against real local servers.

A link is fetched only from public addresses, checked when each connection is made
(`GuardedResolver`, the custom endpoints' rules with LINKS_ALLOW_PRIVATE of its own),
and every redirect hop again. Metadata addresses stay refused whatever the switch says.
"""

from __future__ import annotations

import ipaddress

import pytest
from aiohttp import web

from bot.capabilities.reading.links import LinkFailure, LinkPage, LinkPolicy, read_links
from bot.capabilities.reading.links.policy import LinkPolicy as PolicyClass
from tests.capabilities.reading.links.servers import (
    INTERNAL,
    PUBLIC_STAND_IN,
    PageServer,
    policy_with,
)

SECRET = "<html><head><title>Internal</title></head><body><p>the internal secret page</p></body></html>"


@pytest.fixture
async def internal():
    """The server a forged request would reach (127.0.0.1); what it saw must stay empty."""
    async with PageServer(host=INTERNAL) as server:
        server.page("/secret", SECRET)
        yield server


@pytest.fixture
async def public():
    async with PageServer(host=PUBLIC_STAND_IN) as server:
        yield server


async def _one(text: str, policy: LinkPolicy):
    reading = await read_links(text, policy)
    assert len(reading.results) == 1
    return reading.results[0]


def _refused(result, reason: str) -> LinkFailure:
    assert isinstance(result, LinkFailure), result
    assert result.reason == reason, result
    return result


# ---- loopback and private addresses ---------------------------------------------------------
async def test_loopback_literal_refused(internal):
    result = await _one(f"what is at {internal.url('/secret')}?", LinkPolicy())
    assert "127.0.0.1 is a loopback address" in _refused(result, "private_address").detail
    assert internal.seen == []


async def test_loopback_by_name_refused_at_connection_time(internal):
    policy = policy_with({"intranet.test": [[INTERNAL]]})
    result = await _one(internal.url("/secret", host="intranet.test"), policy)
    _refused(result, "private_address")
    assert policy.resolver.calls == ["intranet.test"]
    assert internal.seen == []


async def test_loopback_allowed_with_the_links_switch(internal):
    result = await _one(f"read {internal.url('/secret')}", LinkPolicy(allow_private=True))
    assert isinstance(result, LinkPage)
    assert "internal secret page" in result.text
    assert internal.paths == ["/secret"]


async def test_the_links_switch_is_its_own():
    """LinkPolicy has its own allow_private: it builds the address rules from it alone."""
    assert PolicyClass().endpoint_policy().allow_private is False
    assert PolicyClass(allow_private=True).endpoint_policy().allow_private is True


@pytest.mark.parametrize("address", ["10.1.2.3", "192.168.1.20", "172.16.0.9", "100.64.0.1",
                                     "[fd12::1]", "[::ffff:10.0.0.1]"])
async def test_private_literal_refused(address):
    result = await _one(f"http://{address}/admin", policy_with())
    _refused(result, "private_address")


async def test_private_address_by_name_refused():
    policy = policy_with({"nas.test": [["192.168.1.20"]]})
    result = await _one("see http://nas.test/files", policy)
    assert "192.168.1.20 is a private address" in _refused(result, "private_address").detail


async def test_one_private_answer_among_public_ones_is_enough_to_refuse():
    policy = policy_with({"mixed.test": [["93.184.216.34", "10.0.0.5"]]})
    _refused(await _one("http://mixed.test/", policy), "private_address")


# ---- metadata and credential addresses: never ----------------------------------------------
@pytest.mark.parametrize("allow_private", [False, True])
@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://169.254.170.2/v2/credentials",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://imds.test/latest/meta-data/",
])
async def test_metadata_refused_even_with_the_switch(url, allow_private):
    policy = policy_with({"imds.test": [["169.254.169.254"]]}, allow_private=allow_private)
    _refused(await _one(url, policy), "blocked_address")


# ---- redirects ------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["http://127.0.0.1:{port}/secret",
                                    "http://intranet.test:{port}/secret",
                                    "http://169.254.169.254/latest/meta-data/"])
async def test_redirect_from_a_public_page_to_a_private_one_refused(public, internal, target):
    public.redirect("/go", target.format(port=internal.port))
    policy = policy_with({"intranet.test": [[INTERNAL]]})
    result = await _one(public.url("/go"), policy)
    assert isinstance(result, LinkFailure) and result.reason in ("private_address", "blocked_address")
    assert public.paths == ["/go"]
    assert internal.seen == []


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://example.test/x",
                                      "http://user:pw@example.test/"])
async def test_redirect_to_another_scheme_or_with_credentials_refused(public, location):
    public.redirect("/go", location)
    _refused(await _one(public.url("/go"), policy_with()), "bad_url")


async def test_relative_redirect_followed_on_the_same_checked_host(public):
    public.redirect("/old", "/new")
    public.page("/new", "plain words", "text/plain")
    result = await _one(public.url("/old"), policy_with())
    assert isinstance(result, LinkPage) and result.text == "plain words"
    assert result.final_url == public.url("/new")
    assert public.paths == ["/old", "/new"]


# ---- DNS rebinding --------------------------------------------------------------------------
async def test_rebinding_refused_at_connection_time(internal):
    """A name that looked public when checked answers loopback when the connection is made."""
    policy = policy_with({"rebind.test": [["93.184.216.34"], [INTERNAL]]})
    checked = await policy.endpoint_policy().allowed_addresses("rebind.test", internal.port)
    assert checked == [ipaddress.ip_address("93.184.216.34")]
    result = await _one(internal.url("/secret", host="rebind.test"), policy)
    assert "127.0.0.1 is a loopback address" in _refused(result, "private_address").detail
    assert policy.resolver.calls == ["rebind.test", "rebind.test"]
    assert internal.seen == []


async def test_rebinding_between_two_connections_of_one_link_refused():
    """The first connection goes to the public address; the redirect's new connection to the
    same name resolves again, now to loopback, where a server on the same port waits."""
    async with PageServer(host=PUBLIC_STAND_IN) as public:
        async with PageServer(host=INTERNAL, port=public.port) as internal:
            internal.page("/secret", SECRET)

            async def closing_redirect(_request: web.Request) -> web.Response:
                response = web.Response(status=302, headers={"Location": "/secret"})
                response.force_close()  # the next hop needs a new connection
                return response
            public.route("/start", closing_redirect)
            policy = policy_with({"rebind.test": [[PUBLIC_STAND_IN], [INTERNAL]]})
            result = await _one(public.url("/start", host="rebind.test"), policy)
    _refused(result, "private_address")
    assert public.paths == ["/start"]
    assert policy.resolver.calls == ["rebind.test", "rebind.test"]
    assert internal.seen == []


async def test_a_name_that_does_not_resolve_is_unreachable():
    _refused(await _one("http://nowhere.test/", policy_with()), "unreachable")


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0177.0.0.1", "0x7f000001", "[::ffff:127.0.0.1]",
                                  "localhost"])
async def test_other_spellings_of_loopback_never_reach_it(internal, host):
    """Through the system resolver: short, decimal, octal and hex forms, a mapped IPv6 form."""
    result = await _one(f"http://{host}:{internal.port}/secret", LinkPolicy())
    assert isinstance(result, LinkFailure) and result.reason in ("private_address", "bad_url")
    assert internal.seen == []
