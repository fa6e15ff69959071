"""The operator's own default address is trusted; a server's own endpoint still needs the flag.

Real parts: the OpenAI SDK (custom provider) against the local replay server on 127.0.0.1,
the adapter built by `open_adapter` as the turn builds it, the route's targets from
`bot.repo.routes`.
"""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime

import pytest

from bot.errors import ErrorScene, resolve_presentation
from bot.repo import KeyLease, ModelTarget
from bot.repo.keys import KeyRef
from bot.repo.routes import _with_base_url, environment_target
from bot.repo.servers import ServerSettings
from bot.settings import Settings
from bot.turn.access import ProviderAccess
from bot.turn.attempts import open_adapter
from bot.turn.policy import plan_next
from providers import normalized_stream
from providers.endpoint_check import EndpointPolicy, EndpointRejected
from tests.support import data_openai as fx
from tests.support.drive_adapter import HELLO
from tests.support.fake_provider_server import ProviderReplayServer, Reply

LEASE = KeyLease(KeyRef("environment", "f"), "sk-…test", "sk-test")
STRICT = EndpointPolicy(allow_private=False)  # the operator did not set ALLOW_PRIVATE_ENDPOINTS


async def _answer(target: ModelTarget):
    adapter = open_adapter(target, LEASE, False, ProviderAccess(STRICT))
    assert adapter is not None
    try:
        return [c async for c in normalized_stream(adapter, HELLO)]
    finally:
        await adapter.aclose()


def _settings(base_url: str) -> Settings:
    return Settings(DISCORD_TOKEN="x", DEFAULT_TEXT_PROVIDER="custom", DEFAULT_TEXT_MODEL="llama3",
                    DEFAULT_TEXT_BASE_URL=base_url)


async def test_the_operators_loopback_default_answers_without_the_private_flag():
    async with ProviderReplayServer() as server:
        server.reply(Reply(body=fx.sse_body(fx.TEXT)))
        target = environment_target(_settings(f"{server.url}/v1"))
        assert target is not None and target.operator_address
        chunks = await _answer(target)
        assert chunks[-1].type == "done", chunks
        assert "".join(c.content or "" for c in chunks if c.type == "text")
        assert len(server.requests) == 1


async def test_a_servers_own_loopback_endpoint_is_refused_and_says_who_can_allow_it():
    async with ProviderReplayServer() as server:
        server.reply(Reply(body=fx.sse_body(fx.TEXT)))
        stored = ServerSettings(1, "custom", "llama3", f"{server.url}/v1", None, False, False)
        target = _with_base_url(ModelTarget("custom", "llama3"), stored)
        assert not target.operator_address
        chunks = await _answer(target)
        assert server.requests == []
    error = chunks[-1].error
    assert (error.kind, error.reason) == ("address_refused", "private_address")
    step = plan_next(error, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert (step.action, step.cool_down_until) == ("next_model", None)
    shown = resolve_presentation(error, ErrorScene(locale="en", credential_source="server"))
    assert shown.title_key == "genai.stream.address_refused_title"
    assert "private or local network address" in shown.headline
    assert shown.tip_keys[0] == "genai.tips.private_endpoint_operator"
    assert not any("verify_api_key" in key for key in shown.tip_keys)


def test_the_same_model_at_the_same_address_is_the_same_target():
    """The mark takes no part in equality: route decisions that compare targets are unchanged."""
    target = environment_target(_settings("http://localhost:11434/v1"))
    assert target == ModelTarget("custom", "llama3", "http://localhost:11434/v1")


@pytest.mark.parametrize("address", ["169.254.169.254", "169.254.170.2", "fd00:ec2::254"])
async def test_metadata_and_credential_addresses_stay_refused_on_the_operators_address(address):
    target = ModelTarget("custom", "m", f"http://[{address}]/v1" if ":" in address else f"http://{address}/v1",
                         operator_address=True)
    policy = ProviderAccess(STRICT).policy_for(target)
    assert policy is not None and policy.allow_private
    with pytest.raises(EndpointRejected) as refused:
        await policy.allowed_addresses(address, 80)
    assert refused.value.reason == "metadata"
    assert policy.refusal(ipaddress.ip_address("127.0.0.1")) is None


def test_a_servers_endpoint_keeps_the_operators_policy():
    target = ModelTarget("custom", "m", "http://10.0.0.5/v1")
    assert ProviderAccess(STRICT).policy_for(target) is STRICT
