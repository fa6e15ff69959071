"""The fake Discord holds autocomplete answers to Discord's rules: choices (callback type 8)
only, at most 25 of them, each name and string value 1 to 100 characters, within 3 s."""

from __future__ import annotations

from typing import Any

import aiohttp

from tests.support.fake_discord_server import FakeDiscord, snowflake


async def _autocomplete(fake: FakeDiscord) -> dict[str, Any]:
    payload = {"id": snowflake(), "token": f"itoken-{snowflake()}", "type": 4, "channel_id": fake.channel_id,
               "application_id": fake.application_id, "data": {"name": "model", "type": 1, "options": []}}
    await fake.dispatch("INTERACTION_CREATE", payload)
    return payload


async def _answer(fake: FakeDiscord, payload: dict[str, Any], body: dict[str, Any]) -> tuple[int, Any]:
    url = f"{fake.api_url}/interactions/{payload['id']}/{payload['token']}/callback"
    async with aiohttp.ClientSession() as http, http.post(url, json=body) as resp:
        return resp.status, await resp.json()


def _choices(*names: str) -> dict[str, Any]:
    return {"type": 8, "data": {"choices": [{"name": name, "value": name} for name in names]}}


async def test_autocomplete_answers_break_discords_rules_with_invalid_form_body(fake_discord: FakeDiscord):
    fake = fake_discord
    refused = {
        "26 choices": _choices(*(f"m{n}" for n in range(26))),
        "an empty name": _choices(""),
        "a 101-character name": _choices("n" * 101),
        "a 101-character value": {"type": 8, "data": {"choices": [{"name": "n", "value": "v" * 101}]}},
        "a message instead of choices": {"type": 4, "data": {"content": "hello"}},
    }
    answers = {name: await _answer(fake, await _autocomplete(fake), body) for name, body in refused.items()}
    assert {status for status, _ in answers.values()} == {400}
    assert {body["code"] for _, body in answers.values()} == {50035}
    assert answers["26 choices"][1]["errors"] == {"data": {"choices": {"_errors": [
        {"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 25 or fewer in length."}]}}}
    assert answers["a 101-character name"][1]["errors"]["data"]["choices"]["0"]["name"]["_errors"][0]["code"] == \
        "BASE_TYPE_BAD_LENGTH"
    assert "value" in answers["a 101-character value"][1]["errors"]["data"]["choices"]["0"]
    assert answers["a message instead of choices"][1]["errors"]["type"]["_errors"][0]["code"] == \
        "INTERACTION_CALLBACK_TYPE_INVALID"
    ok = await _answer(fake, await _autocomplete(fake), _choices(*(f"m{n}" for n in range(25))))
    assert ok[0] == 200 and len(fake.interaction_responses) == 1


async def test_autocomplete_answered_after_three_seconds_is_unknown(fake_discord: FakeDiscord):
    fake = fake_discord
    payload = await _autocomplete(fake)
    fake.interaction(payload["id"]).created_at -= 3.1  # as if the bot took that long
    assert await _answer(fake, payload, _choices("m")) == (404, {"message": "Unknown interaction", "code": 10062})
    assert fake.interaction_responses == []
