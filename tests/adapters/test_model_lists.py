"""Listing a provider's models (`providers.listing.list_models`) through the real SDKs on
the replay server: the request each SDK sends (path, query, the route's key in its
auth header), every page read, each family's shape read, and the bounds (bytes per page,
models kept, time) and refusals (a private address, a redirect) an answer has too.
"""

from __future__ import annotations

import pytest

from providers import model_list, sdk_adapter
from providers.client_pool import ClientPool
from providers.endpoint_check import EndpointPolicy
from providers.http_transport import TRANSPORTS
from providers.listing import list_models
from providers.model_list import ListedModel, ModelListFailed
from tests.support.data_errors import anthropic_error, openai_error
from tests.support.fake_model_lists import (
    AnthropicModels,
    FixedListing,
    GeminiModels,
    OpenAIModels,
    OpenRouterModels,
)
from tests.support.fake_provider_server import Reply

KEY = "sk-list-route-key-7a31"
LOOPBACK_OK = EndpointPolicy(allow_private=True)  # the replay server listens on 127.0.0.1


@pytest.fixture(params=TRANSPORTS)
async def pool(request):
    """Every listing test runs on both transports the SDK clients send through."""
    clients = ClientPool(request.param)
    yield clients
    await clients.aclose()


@pytest.mark.parametrize("provider", ["openai", "deepseek", "zai", "custom"])
async def test_an_openai_style_endpoint_is_asked_get_models_with_the_routes_key(provider_server, pool, provider):
    server = provider_server
    server.listing = OpenAIModels(["gpt-5.5", "gpt-5.5-mini", "o3"], owned_by=provider)
    listed = await list_models(provider, api_key=KEY, base_url=f"{server.url}/v1", endpoint_policy=LOOPBACK_OK,
                               clients=pool)
    assert [m.id for m in listed] == ["gpt-5.5", "gpt-5.5-mini", "o3"]
    assert all(m.parameters is None for m in listed)
    [request] = server.requests
    assert (request.method, request.path, request.query) == ("GET", "/v1/models", {})
    assert request.headers["Authorization"] == f"Bearer {KEY}" and request.api_key == KEY


async def test_openrouter_lists_what_each_model_takes(provider_server, pool):
    server = provider_server
    server.listing = OpenRouterModels({"openai/gpt-5.5": ["tools", "reasoning", "max_tokens"],
                                       "mistralai/mistral-7b-instruct": ["temperature", "max_tokens"]})
    listed = await list_models("openrouter", api_key=KEY, base_url=f"{server.url}/api/v1", clients=pool)
    assert listed == (ListedModel("openai/gpt-5.5", frozenset({"tools", "reasoning", "max_tokens"})),
                      ListedModel("mistralai/mistral-7b-instruct", frozenset({"temperature", "max_tokens"})))
    [request] = server.requests
    assert (request.method, request.path, request.api_key) == ("GET", "/api/v1/models", KEY)


async def test_anthropic_is_read_page_after_page(provider_server, pool):
    server = provider_server
    ids = [f"claude-model-{n:04d}" for n in range(2500)]
    server.listing = AnthropicModels(ids)
    listed = await list_models("anthropic", api_key=KEY, base_url=server.url, clients=pool)
    assert [m.id for m in listed] == ids
    assert [(r.method, r.path) for r in server.requests] == [("GET", "/v1/models")] * 3
    assert [r.query for r in server.requests] == [
        {"limit": "1000"}, {"limit": "1000", "after_id": ids[999]}, {"limit": "1000", "after_id": ids[1999]}]
    assert {r.api_key for r in server.requests} == {KEY}
    assert all(r.headers["anthropic-version"] for r in server.requests)


async def test_gemini_lists_only_models_that_generate_content_by_their_short_names(provider_server, pool):
    server = provider_server
    methods = {f"gemini-test-{n:04d}": ["generateContent", "countTokens"] for n in range(1500)}
    methods |= {"gemini-embedding-001": ["embedContent"], "imagen-4.0-generate-001": ["predict"]}
    server.listing = GeminiModels(methods)
    listed = await list_models("google", api_key=KEY, base_url=server.url, clients=pool)
    assert [m.id for m in listed] == [f"gemini-test-{n:04d}" for n in range(1500)]
    assert [(r.method, r.path) for r in server.requests] == [("GET", "/v1beta/models")] * 2
    assert [r.query for r in server.requests] == [{"pageSize": "1000"}, {"pageSize": "1000", "pageToken": "page-1000"}]
    assert {r.headers["x-goog-api-key"] for r in server.requests} == {KEY}


@pytest.mark.parametrize(("provider", "reply"), [
    ("custom", openai_error(401, f"Incorrect API key provided: {KEY[:3]}***{KEY[-4:]}.", code="invalid_api_key",
                            kind="invalid_request_error")),
    ("anthropic", anthropic_error(401, "authentication_error", "invalid x-api-key")),
    ("google", Reply.error(400, {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                           "status": "INVALID_ARGUMENT", "details": [{
                                               "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                               "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}})),
])
async def test_a_refused_key_fails_the_list_as_an_answer_would_and_says_no_key(provider_server, pool, provider,
                                                                               reply):
    server = provider_server
    server.listing = FixedListing(reply)
    base_url = f"{server.url}/v1" if provider == "custom" else server.url
    with pytest.raises(ModelListFailed) as failed:
        await list_models(provider, api_key=KEY, base_url=base_url, endpoint_policy=LOOPBACK_OK, clients=pool)
    assert failed.value.error.kind == "invalid_key"
    assert str(failed.value) == "invalid_key" and KEY[-4:] not in str(failed.value)


async def test_a_body_in_no_documented_shape_fails_the_list(provider_server, pool):
    server = provider_server
    server.listing = FixedListing(Reply(body=b'{"models": "everything"}', content_type="application/json"))
    with pytest.raises(ModelListFailed):
        await list_models("custom", api_key=KEY, base_url=f"{server.url}/v1", endpoint_policy=LOOPBACK_OK,
                          clients=pool)


async def test_a_huge_body_is_cut_and_the_models_before_the_cut_are_kept_whole(provider_server, pool):
    server = provider_server
    parameters = {f"vendor/model-{n:05d}": ["tools", "temperature", f"extra_{n}"] for n in range(3000)}
    server.listing = OpenRouterModels(parameters, description="x" * 2000)  # about 7.5 MB in all
    listed = await list_models("openrouter", api_key=KEY, base_url=f"{server.url}/api/v1", clients=pool)
    assert 1000 < len(listed) < 3000
    assert all(m.parameters == frozenset(parameters[m.id]) for m in listed)
    assert [m.id for m in listed] == list(parameters)[:len(listed)]


async def test_no_more_than_max_listed_models_are_kept_or_asked_for(provider_server, pool):
    server = provider_server
    server.listing = AnthropicModels([f"claude-model-{n:05d}" for n in range(12_000)])
    listed = await list_models("anthropic", api_key=KEY, base_url=server.url, clients=pool)
    assert len(listed) == model_list.MAX_LISTED
    assert len(server.requests) == model_list.MAX_LISTED // 1000


async def test_a_slow_list_fails_within_the_listing_time(provider_server, pool, monkeypatch):
    monkeypatch.setattr(sdk_adapter, "LIST_SECONDS", 0.2)
    server = provider_server
    server.listing = FixedListing(Reply(body=b'{"data": []}', content_type="application/json", first_byte_delay=1))
    with pytest.raises(ModelListFailed) as failed:
        await list_models("anthropic", api_key=KEY, base_url=server.url, clients=pool)
    assert failed.value.error.kind == "timeout"


async def test_a_custom_endpoint_on_a_private_address_is_not_asked_without_the_operators_leave(provider_server,
                                                                                              pool):
    server = provider_server
    server.listing = OpenAIModels(["local-model"])
    with pytest.raises(ModelListFailed) as failed:
        await list_models("custom", api_key=KEY, base_url=f"{server.url}/v1", endpoint_policy=EndpointPolicy(),
                          clients=pool)
    assert failed.value.error.kind == "address_refused"
    assert server.requests == []


@pytest.mark.parametrize("provider", ["custom", "anthropic", "google"])
async def test_a_list_endpoint_that_redirects_is_not_followed(provider_server, pool, provider):
    server = provider_server
    elsewhere = f"{server.url}/elsewhere/models"
    server.listing = FixedListing(Reply(status=307, headers={"Location": elsewhere}, content_type="text/plain"))
    base_url = f"{server.url}/v1" if provider == "custom" else server.url
    with pytest.raises(ModelListFailed):
        await list_models(provider, api_key=KEY, base_url=base_url, endpoint_policy=LOOPBACK_OK, clients=pool)
    assert [r.path for r in server.requests if r.path.startswith("/elsewhere")] == []


async def test_a_custom_provider_without_an_address_cannot_be_listed():
    with pytest.raises(ValueError, match="base_url"):
        await list_models("custom", api_key=KEY)
