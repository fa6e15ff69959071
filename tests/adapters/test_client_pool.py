"""Shared provider HTTP clients (providers/client_pool.py), with the real SDKs on the replay server.

Two adapters with different keys for one provider and address send through one HTTP
client, each request carrying its own key; ending an attempt leaves the shared client
open; a custom endpoint keeps refusing redirects and private addresses through it; a
different address policy never shares a client; and closing the pool closes them all.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx2
import pytest

from providers import create_adapter, normalized_stream
from providers.client_pool import ClientKey, ClientPool, PoolClosed
from providers.endpoint_check import EndpointPolicy
from providers.gemini.adapter import SharedGeminiTransport
from providers.safe_transport import AddressRefused, RedirectRefused
from providers.types import ProcessedChunk
from tests.support import data_anthropic, data_gemini, data_openai, data_openai_responses
from tests.support.drive_adapter import HELLO, connection, summarize
from tests.support.fake_provider_server import ProviderReplayServer, Reply

KEYS = ("sk-shared-key-one-1111", "sk-shared-key-two-2222")

REPLIES = {
    "openai": Reply(body=data_openai_responses.sse_body(data_openai_responses.TEXT)),  # the Responses API
    "custom": Reply(body=data_openai.sse_body(data_openai.TEXT)),
    "anthropic": Reply.named_sse(data_anthropic.ANTHROPIC_REDACTED),
    "google": Reply(body=data_gemini.GEMINI_THINK_TEXT),
}


def sdk_http_client(adapter: Any) -> Any:
    """The HTTP client the adapter's SDK client really sends through."""
    sdk = adapter._sdk()
    if adapter.provider == "google":
        return sdk.aio._api_client._async_httpx_client
    return sdk._client


async def stream(adapter: Any) -> list[ProcessedChunk]:
    return [chunk async for chunk in normalized_stream(adapter, HELLO)]


@pytest.mark.parametrize("provider", ["openai", "custom", "anthropic", "google"])
async def test_two_keys_share_one_http_client_and_send_their_own_key(provider_server, provider):
    server, pool = provider_server, ClientPool()
    server.reply(REPLIES[provider])
    seen, sdks = [], []
    for key in KEYS:
        adapter = create_adapter(provider, **{**connection(provider, server.url), "api_key": key},
                                 timeout=10, clients=pool)
        outcome = summarize(await stream(adapter))
        assert outcome.error is None and outcome.text, outcome.chunks
        seen.append(sdk_http_client(adapter))
        sdks.append(adapter._sdk())
        await adapter.aclose()  # the attempt ends: the shared client must stay open
        assert not seen[-1].is_closed
    assert seen[0] is seen[1]
    assert [r.api_key for r in server.requests] == list(KEYS)
    families = sorted(k.family for k in pool.keys())
    if provider in ("openai", "custom"):  # the SDK client is shared too, and holds no key
        assert families == ["openai_compat", "openai_compat.sdk"] and sdks[0] is sdks[1]
        assert all(k not in sdks[0].api_key + repr(sdks[0].default_headers) for k in KEYS)
    else:
        assert families == [{"anthropic": "anthropic", "google": "gemini"}[provider]]
    assert all(k not in repr(pool) + repr(pool.keys()) + repr(adapter) for k in KEYS)
    await pool.aclose()
    assert seen[0].is_closed


async def test_without_a_pool_each_adapter_owns_and_closes_its_client(provider_server):
    provider_server.reply(REPLIES["openai"])
    adapter = create_adapter("openai", **connection("openai", provider_server.url), timeout=10)
    assert summarize(await stream(adapter)).error is None
    client = sdk_http_client(adapter)
    await adapter.aclose()
    assert client.is_closed


async def test_a_policy_is_part_of_the_key_so_a_guard_is_never_shared(provider_server):
    """The operator's loopback-allowing client does not carry a public-only endpoint there."""
    server, pool = provider_server, ClientPool()
    server.reply(REPLIES["custom"])
    base = f"{server.url}/v1"
    allowed = create_adapter("custom", api_key=KEYS[0], model="m", base_url=base, timeout=10, clients=pool,
                             endpoint_policy=EndpointPolicy(allow_private=True))
    assert summarize(await stream(allowed)).error is None
    public_only = create_adapter("custom", api_key=KEYS[1], model="m", base_url=base, timeout=10, clients=pool,
                                 endpoint_policy=EndpointPolicy())
    error = summarize(await stream(public_only)).error
    assert error is not None and isinstance(error.original_error, AddressRefused)
    assert "loopback" in error.message and not error.retryable
    assert [r.api_key for r in server.requests] == [KEYS[0]]  # the refused one sent nothing
    assert len(pool) == 4 and {k.policy.allow_private for k in pool.keys()} == {True, False}  # HTTP + SDK each
    # Still refused the second time, through the now-existing shared client.
    error = summarize(await stream(public_only)).error
    assert isinstance(error.original_error, AddressRefused) and len(server.requests) == 1
    await pool.aclose()


async def test_a_custom_endpoint_still_refuses_redirects_through_the_shared_client(provider_server):
    pool = ClientPool()
    async with ProviderReplayServer() as internal:
        internal.reply(REPLIES["custom"])
        redirect = Reply(status=307, body=b"", content_type="text/plain",
                         headers={"Location": f"{internal.url}/v1/chat/completions?secret=1"})
        provider_server.reply(redirect)
        policy = EndpointPolicy(allow_private=True)
        for key in KEYS:  # the first makes the shared client, the second reuses it
            adapter = create_adapter("custom", api_key=key, model="m", base_url=f"{provider_server.url}/v1",
                                     timeout=10, endpoint_policy=policy, clients=pool)
            error = summarize(await stream(adapter)).error
            assert error is not None and isinstance(error.original_error, RedirectRefused), error
            assert "307" in error.message and "secret" not in error.message
        assert internal.requests == []
    assert [r.api_key for r in provider_server.requests] == list(KEYS)
    assert len(pool) == 2  # one HTTP client and one SDK client on it
    await pool.aclose()


async def test_closing_the_pool_closes_every_client_and_admits_no_new_one():
    pool = ClientPool()
    plain = pool.get(ClientKey("openai_compat", "https://a.example/v1"), httpx2.AsyncClient)
    gemini = pool.get(ClientKey("gemini", None), SharedGeminiTransport.new)
    assert pool.get(ClientKey("openai_compat", "https://a.example/v1"), httpx2.AsyncClient) is plain
    await pool.aclose()
    assert plain.is_closed and gemini.async_client.is_closed and gemini.sync_client.is_closed
    assert pool.closed and len(pool) == 0
    with pytest.raises(PoolClosed):
        pool.get(ClientKey("openai_compat", "https://a.example/v1"), httpx2.AsyncClient)


async def test_one_failing_close_does_not_keep_the_others_open():
    class Broken:
        async def aclose(self) -> None:
            raise OSError("already gone")

    pool = ClientPool()
    pool.get(ClientKey("anthropic", "https://one.example"), Broken)
    good = pool.get(ClientKey("anthropic", "https://two.example"), httpx2.AsyncClient)
    await pool.aclose()
    assert good.is_closed


async def test_gemini_on_the_shared_httpx2_client_classifies_cuts_and_statuses(provider_server):
    """Pooled, google-genai sends through httpx2 (not its own aiohttp): failures read the same."""
    pool = ClientPool()
    conn = connection("google", provider_server.url)
    provider_server.enqueue(Reply(body=data_gemini.GEMINI_THINK_TEXT, cut_after_bytes=60),
                            Reply.error(429, {"error": {"code": 429, "message": "Resource has been exhausted",
                                                        "status": "RESOURCE_EXHAUSTED"}}))
    cut = summarize(await stream(create_adapter("google", **conn, timeout=10, clients=pool))).error
    assert cut is not None and cut.retryable and cut.kind in ("transient", "timeout"), cut
    limited = summarize(await stream(create_adapter("google", **conn, timeout=10, clients=pool))).error
    assert limited is not None and limited.status == 429, limited
    assert len(pool) == 1
    await pool.aclose()


async def test_the_key_each_request_carries_stays_out_of_the_sdks_debug_log(provider_server, caplog):
    """The OpenAI family's key goes per request (the shared SDK client holds none): with
    every debug log on (the SDK's, its HTTP client's, ours), no record shows the key."""
    pool = ClientPool()
    provider_server.reply(REPLIES["openai"])
    adapter = create_adapter("openai", **{**connection("openai", provider_server.url), "api_key": KEYS[0]},
                             timeout=10, clients=pool)
    with caplog.at_level(logging.DEBUG):
        assert summarize(await stream(adapter)).error is None
    await pool.aclose()
    assert [r.api_key for r in provider_server.requests] == [KEYS[0]]
    logged = "\n".join(f"{record.name} {record.getMessage()} {record.args!r}" for record in caplog.records)
    assert "openai._base_client Building HTTP request" in logged  # the SDK logged the request...
    assert KEYS[0] not in logged and KEYS[0][-4:] not in logged  # ...and nothing logged its key
