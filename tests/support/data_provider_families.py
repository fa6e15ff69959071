"""The provider families the robustness suite (tests/adapters/test_robustness.py) runs over.

One row per wire family: its own fixture streams (written from the documented wire
format, so the suite means something without the shared corpus; they also seed the
fuzz), the recorded streams kept in the repo (cut and re-split, too long to fuzz or cut
at every byte), the corpus folders it reads, how its pure half (decoder + `process_chunk`, no
HTTP) is fed, and the few expectations that name the family's own wording. Everything else in the suite is the same for every family.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from providers.types import RawStreamChunk
from tests.support import data_anthropic as anthropic
from tests.support import data_gemini as gemini
from tests.support import data_gemini_search as gemini_search
from tests.support import data_openai as fx
from tests.support import data_openai_responses as rx
from tests.support.drive_adapter import Stream, native_raws, openai_raws, responses_raws
from tests.support.env_corpus import CORPUS, corpus_streams
from tests.support.fake_provider_server import Reply


@dataclass(frozen=True)
class Expected:
    """What one targeted case of a family gives: text shown, raw thoughts, the wording."""

    source: str | Stream  # an own stream's name, or the stream itself
    text: str = ""
    thoughts: tuple[tuple[str, str], ...] = ()  # (kind, text) entries, in order
    message: str = ""  # the error message (the interrupted one, in the cut JSON case)
    other_message: str = ""  # the cut JSON case: how the same event, completed, reads
    marker: bytes = b""  # the tool-argument cut goes just before these bytes
    drop: int = 0  # the clean-end case: how many last events are left out


@dataclass(frozen=True)
class Family:
    """One wire family: what it streams and how its adapter's pure half is fed."""

    name: str
    own: dict[str, Stream]
    corpus: dict[str, str]  # corpus folder -> provider
    raws: Callable[[Stream, list[bytes]], Iterator[RawStreamChunk]]  # the pure half's input
    # Event boundaries cut through the server: None = every one; n = first, second,
    # middle, last and seeded others up to n (the OpenAI corpus runs to 400 events).
    server_cuts: int | None
    tool_cut: Expected  # a cut inside a call's arguments
    cut_json: Expected  # the last event's JSON cut (its message: interrupted)
    unfinished: Expected  # a clean end before the finish reason
    wrong_type: Expected  # text, then an event whose text has the wrong type
    fuzz_provider: str  # the provider the arbitrary-bytes fuzz reads as
    # What the `done` chunk reports whatever the body's values: "finish_reason", "usage".
    done_always_has: tuple[str, ...] = ()
    # The pure half emits nothing after an error without normalized_stream stopping it.
    quiet_after_error: bool = False
    recorded: dict[str, Stream] = field(default_factory=dict)  # recorded streams in the repo

    def stream(self, name: str | Stream) -> Stream:
        """An own or recorded stream by name, else a corpus stream (provider from its folder)."""
        if isinstance(name, Stream):
            return name
        if name in self.own:
            return self.own[name]
        if name in self.recorded:
            return self.recorded[name]
        assert CORPUS is not None
        return Stream(self.corpus[name.split("/")[0]], Reply.from_corpus(CORPUS, name))

    def stream_names(self) -> list[str]:
        return (sorted(self.own) + sorted(self.recorded)
                + [n for folder in self.corpus for n in corpus_streams(folder)])


# ---- the table -------------------------------------------------------------------------------
def _anthropic(events: list[tuple[str, dict]]) -> Stream:
    return Stream("anthropic", Reply.named_sse(events))


def _google(body: bytes) -> Stream:
    return Stream("google", Reply(body=body))


def _openai(provider: str, events: list[Any], tools: bool = False, **sse: Any) -> Stream:
    return Stream(provider, Reply(body=fx.sse_body(events, **sse)), tools)


ANTHROPIC = Family(
    name="anthropic",
    own={
        "own/think_tools": _anthropic(anthropic.ANTHROPIC_THINK_TOOLS),
        "own/redacted": _anthropic(anthropic.ANTHROPIC_REDACTED),
        "own/midstream_rate_limit": _anthropic(anthropic.ANTHROPIC_RATE_LIMITED_MIDSTREAM),
        "own/max_tokens_tool": _anthropic(anthropic.ANTHROPIC_MAX_TOKENS_TOOL),
    },
    corpus={"anthropic": "anthropic"},
    raws=native_raws,
    server_cuts=None,
    # Inside the first call's argument pieces.
    tool_cut=Expected("own/think_tools", text="Checking both cities.", marker=b'ty\\": \\"Par',
                      thoughts=(("raw", "The user wants "), ("raw", "weather for two cities."),
                                ("signature", anthropic.SIGNATURE))),
    cut_json=Expected("own/redacted", message="Anthropic stream interrupted: the last event is cut",
                      other_message="malformed Anthropic stream: event 'message_stop' data is not JSON ("),
    unfinished=Expected("own/redacted", text="Hello there.", drop=2),
    wrong_type=Expected(_anthropic(anthropic.anthropic_events(
        [[*anthropic.a_text_block(0, ["ok"]), anthropic.a_delta(0, {"type": "text_delta", "text": 5})]],
        "end_turn", 3)), text="ok", message="text_delta without text"),
    fuzz_provider="anthropic",
    done_always_has=("usage",),  # message_start carries it
)

GEMINI = Family(
    name="gemini",
    own={
        "own/think_text": _google(gemini.GEMINI_THINK_TEXT),
        "own/parallel_calls": _google(gemini.GEMINI_PARALLEL_CALLS),
        "own/safety_after_text": _google(gemini.GEMINI_SAFETY_AFTER_TEXT),
        "own/midstream_error_data": _google(gemini.GEMINI_MIDSTREAM_ERROR_DATA),
        "own/midstream_error_bare": _google(gemini.GEMINI_MIDSTREAM_ERROR_BARE),
        # Server-side search parts kept for the next round (their resplit and fuzz too).
        "own/search_then_call": _google(gemini_search.search_then_call("get_weather", {"city": "Berlin"})),
    },
    corpus={"gemini": "google"},
    raws=native_raws,
    server_cuts=None,
    # Inside the payload that carries both calls.
    tool_cut=Expected("own/parallel_calls", thoughts=(("raw", "Let me look."),), marker=b'"get_time"'),
    cut_json=Expected("own/think_text", message="Gemini stream interrupted: the last payload is cut",
                      other_message="malformed Gemini stream: payload is not JSON ("),
    unfinished=Expected("own/think_text", text="The sky ", drop=1),
    wrong_type=Expected(_google(gemini.gemini_body([gemini.g_chunk([{"text": "ok"}]),
                                                    gemini.g_chunk([{"text": 5}], "STOP")])),
                        text="ok", message="part text is not a string"),
    fuzz_provider="google",
    done_always_has=("finish_reason",),  # only a finish reason ends a Gemini stream cleanly
)

OPENAI = Family(
    name="openai",
    own={
        "own/text": _openai("custom", fx.TEXT),
        "own/reasoning": _openai("deepseek", fx.REASONING_CONTENT),
        "own/think": _openai("custom", fx.THINK_TAGS_SPLIT),
        "own/parallel": _openai("openrouter", fx.PARALLEL_TOOL_CALLS),
        "own/truncated": _openai("zai", fx.TRUNCATED_ARGUMENTS),
        "own/openrouter": _openai("openrouter", fx.OPENROUTER_REASONING_TOOL, comments=fx.OPENROUTER_COMMENTS),
        "own/verbatim": _openai("custom", fx.VERBATIM, tools=True),
    },
    # OpenAI's own chat-completions recordings, read as any chat-completions endpoint would
    # (OpenAI itself now speaks the Responses API: the RESPONSES row).
    corpus={"openai": "custom", "openrouter": "openrouter", "deepseek": "deepseek", "zai": "zai",
            "groq": "custom"},
    raws=openai_raws,
    server_cuts=7,
    tool_cut=Expected("own/parallel", marker=b'ris\\"}'),
    # The last event must carry the finish reason: a cut line after it is dropped.
    cut_json=Expected(_openai("zai", fx.TRUNCATED_ARGUMENTS, done=False),
                      message="the stream ended before the provider finished the answer",
                      other_message="malformed stream: event is not JSON ("),
    unfinished=Expected("own/text", text="Hello!", drop=3),
    wrong_type=Expected(_openai("custom", [fx.chunk({"content": "ok"}), fx.chunk({"content": 5})]),
                        text="ok", message="content is not a string"),
    fuzz_provider="openrouter",
    quiet_after_error=True,
)

def _responses(events: list[Any]) -> Stream:
    return Stream("openai", Reply(body=rx.sse_body(events)))


RESPONSES = Family(
    name="openai_responses",
    own={
        "own/text": _responses(rx.TEXT),
        "own/reasoning_calls": _responses(rx.REASONING_CALLS),
        "own/length": _responses(rx.LENGTH),
        "own/refusal": _responses(rx.REFUSAL),
        "own/raw_reasoning": _responses(rx.RAW_REASONING),
        "own/search": _responses(rx.SEARCH),
        "own/midstream_error": _responses(rx.MIDSTREAM_ERROR),
    },
    recorded={f"recorded/{path.stem}": Stream("openai", Reply(body=path.read_bytes()))
              for path in sorted(rx.FIXTURES.glob("*.sse"))},
    corpus={},
    raws=responses_raws,
    server_cuts=7,
    # Inside the first call's argument pieces: only a finished item is a call.
    tool_cut=Expected("own/reasoning_calls", marker=b'ty\\": \\"Par',
                      thoughts=(("summary", "The user wants "), ("summary", "weather."),
                                ("summary", "\n\nTwo cities: call twice."))),
    cut_json=Expected("own/text", message="the stream ended before the provider finished the answer",
                      other_message="malformed stream: event is not JSON ("),
    unfinished=Expected("own/text", text="Hello there.", drop=1),
    wrong_type=Expected(_responses([rx.created(), *rx.message(0, ["ok"])[:2],
                                    rx.event("response.output_text.delta", item_id="msg_1", output_index=0,
                                             content_index=0, delta=5)]),
                        text="ok", message="response.output_text.delta delta is not a string"),
    fuzz_provider="openai",
    done_always_has=("finish_reason",),  # only a terminal event ends a response cleanly
    quiet_after_error=True,
)

FAMILIES = [ANTHROPIC, GEMINI, OPENAI, RESPONSES]
FAMILY = {family.name: family for family in FAMILIES}
