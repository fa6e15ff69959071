"""The parts of a route check: the tiny files it sends, which checks a model gets, how an
answer is judged, how one response is read (bounded, timed), the table and its fit, and
the cool-down. Requests go through the official SDKs to the replay server."""

from __future__ import annotations

import io

from PIL import Image
from pypdf import PdfReader

from bot.capabilities.reading.pdf_files import read_pdf
from bot.capabilities.web_search.answer import search_reach
from bot.check.cooldown import Cooldown
from bot.check.probes import (
    DOCUMENT,
    IMAGE,
    TEXT,
    Heard,
    Probe,
    called_check_tool,
    plan,
)
from bot.check.reply import BULLET, fitted
from bot.check.run import HEARD_CHARS, CheckRoute, hear, run_probe
from bot.check.samples import DOCUMENT_WORD, IMAGE_SIDE, solid_png, word_pdf
from bot.check.table import said
from bot.repo import ModelTarget
from bot.repo.keys import KEYLESS_LEASE
from bot.turn.access import ProviderAccess
from bot.turn.attempts import open_adapter
from providers.capabilities import capabilities_of
from providers.endpoint_check import EndpointPolicy
from providers.identity import Provider
from providers.model_capabilities import NO_HINTS
from providers.types import FunctionCall, ThoughtLogEntry, Usage
from tests.support.data_openai import openai_events
from tests.support.fake_provider_server import ProviderReplayServer, Reply


def names(rows) -> list[tuple[str, str | None]]:
    return [(row.name, "run" if row.probe else "service" if row.service else row.skipped) for row in rows]


def test_the_image_is_one_colour_and_the_pdf_one_word_every_reader_opens():
    image = Image.open(io.BytesIO(solid_png()))
    assert image.format == "PNG" and image.size == (IMAGE_SIDE, IMAGE_SIDE)
    assert len(image.getcolors()) == 1  # one colour
    reader = PdfReader(io.BytesIO(word_pdf()), strict=True)  # strict: a bad cross-reference table raises
    assert [page.extract_text() for page in reader.pages] == [DOCUMENT_WORD]
    assert read_pdf(word_pdf(), "check.pdf").text == f"[Page 1]\n{DOCUMENT_WORD}"  # as the bot reads an attachment
    assert len(solid_png()) + len(word_pdf()) < 2000


def test_which_checks_a_model_gets_follow_its_capabilities():
    claude = capabilities_of(Provider.ANTHROPIC, "claude-sonnet-4-5", NO_HINTS)
    assert names(plan(claude, search_reach(True, claude, service=False))) == [
        ("text", "run"), ("tools", "run"), ("reasoning", "run"), ("web_search", "run"), ("image", "run"),
        ("document", "run")]
    custom = capabilities_of(Provider.CUSTOM, "llama", NO_HINTS)
    assert names(plan(custom, search_reach(True, custom, service=True))) == [
        ("text", "run"), ("tools", "run"), ("reasoning", "commands.check.note.no_reasoning"),
        ("web_search", "service"), ("image", "run"), ("document", "commands.check.note.pdf_as_text")]
    gemma = capabilities_of(Provider.GOOGLE, "gemma-3-27b-it", NO_HINTS)
    assert dict(names(plan(gemma, search_reach(True, gemma, service=False))))["web_search"] == \
        "commands.check.note.search_not_native"
    assert dict(names(plan(claude, search_reach(False, claude, service=True))))["web_search"] == \
        "commands.check.note.search_off"


def test_answers_are_judged_by_what_was_asked_not_by_their_wording():
    assert IMAGE.judge(Heard(text="It is RED.")) is None
    assert IMAGE.judge(Heard(text="Blue.")) == "commands.check.note.missed"
    assert IMAGE.judge(Heard(text="  ")) == "commands.check.note.no_text"
    assert DOCUMENT.judge(Heard(text="The word is Lighthouse")) is None
    signature_only = Heard(text="No.", thoughts=(ThoughtLogEntry("signature", "EqQB", "anthropic"),))
    assert plan_probe("reasoning").judge(signature_only) == "commands.check.note.no_thoughts"
    assert plan_probe("reasoning").judge(Heard(thoughts=(ThoughtLogEntry("summary", "7 × 13", "google"),))) is None
    assert plan_probe("web_search").judge(Heard(text="Today.", usage=Usage(searches=1))) is None
    assert plan_probe("web_search").judge(Heard(text="Today.")) == "commands.check.note.no_search"
    assert called_check_tool(Heard(calls=(FunctionCall("other", {}),))) == "commands.check.note.no_call"
    assert called_check_tool(Heard(calls=(FunctionCall("check_word", {}),))) is None


def plan_probe(name: str) -> Probe:
    claude = capabilities_of(Provider.ANTHROPIC, "claude-sonnet-4-5", NO_HINTS)
    return next(row.probe for row in plan(claude, "native") if row.name == name)


def test_what_a_model_said_is_shown_on_one_short_line_without_a_key():
    shown = said("Sure!\n\n```\nsk-ant-api03-" + "x" * 40 + "\n```" + " more" * 40, ("sk-ant-api03-" + "x" * 40,))
    assert "\n" not in shown and "`" not in shown and "xxxx" not in shown
    assert len(shown) <= 60 and shown.endswith("…")


def test_a_reply_too_long_loses_its_last_fixes_then_shortens_its_rows_never_a_row():
    rows = [f"✗ Check {i} · 1.0 s — request_refused: " + "words " * 60 for i in range(6)]
    fixes = [f"fix number {i} " * 5 for i in range(8)]
    some = fitted(rows[:2], fixes, "**How to fix**", limit=1200)
    assert len(some) <= 1200 and some.count(BULLET) < len(fixes) and fixes[0].strip() in some
    none = fitted(rows, fixes, "**How to fix**", limit=1200)
    assert len(none) <= 1200 and BULLET not in none
    assert [line[:9] for line in none.splitlines()] == [row[:9] for row in rows]


def test_one_check_per_scope_a_minute_counted_from_its_start():
    now = [1000.0]
    cooldown = Cooldown(60, clock=lambda: now[0])
    assert cooldown.take("server") == 0
    now[0] += 20
    assert cooldown.take("server") == 40 and cooldown.take("member") == 0
    cooldown.give_back("member")
    assert cooldown.take("member") == 0
    now[0] += 40
    assert cooldown.take("server") == 0


def custom_route(server: ProviderReplayServer) -> CheckRoute:
    return CheckRoute(ModelTarget("custom", "llama", f"{server.url}/v1"), KEYLESS_LEASE, "server")


ALLOW_LOOPBACK = ProviderAccess(EndpointPolicy(allow_private=True))


async def test_reading_stops_once_a_response_says_more_than_a_check_needs(provider_server) -> None:
    provider_server.reply(Reply.sse(openai_events(["ready " * 50] * 200)))  # 60,000 characters
    adapter = open_adapter(custom_route(provider_server).target, KEYLESS_LEASE, False, ALLOW_LOOPBACK)
    try:
        heard = await hear(adapter, TEXT.ask())
    finally:
        await adapter.aclose()
    assert heard.error is None and 0 < len(heard.text) <= HEARD_CHARS


async def test_a_check_ends_at_its_own_time_as_a_timeout(provider_server) -> None:
    provider_server.reply(Reply.sse(openai_events(["late"]), first_byte_delay=3))
    quick = Probe("text", TEXT.label, TEXT.ask, TEXT.judge, timeout=0.3)
    result = await run_probe(quick, custom_route(provider_server), ALLOW_LOOPBACK)
    assert result.state == "failed" and result.error is not None and result.error.kind == "timeout"
    assert result.seconds is not None and result.seconds < 2 and result.usage is None


async def test_a_cut_stream_is_the_checks_cross_never_an_exception(provider_server) -> None:
    provider_server.reply(Reply.sse(openai_events(["Ready and more words"]), cut_after_bytes=120))
    result = await run_probe(TEXT, custom_route(provider_server), ALLOW_LOOPBACK)
    assert result.state == "failed" and result.error is not None and result.error.kind == "transient"
