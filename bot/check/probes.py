"""The checks as data: what each asks a route, and how it judges what came back.

One check per capability a turn may use: streamed text, a tool call round trip (the
model calls a tiny tool, its result goes back, the model answers with it), reasoning
shown, web search, an image and a PDF. Each asks one small thing whose answer a word
match can judge, so a check says only whether the route still takes the request form a
turn sends, never how good the model is. Which checks apply comes from the model's
`ModelCapabilities`, as a turn decides what to send; a check the route does not take is
listed as skipped with the reason.

Pure: requests are built and streams judged here; `bot.check.run` sends them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from bot.capabilities.web_search.answer import SearchReach
from bot.check.samples import DOCUMENT_WORD, IMAGE_COLOUR, solid_png, word_pdf
from bot.tools.registry import Tool, ToolContext, ToolRegistry
from providers.model_capabilities import ModelCapabilities
from providers.types import (
    ChatRequest,
    DocumentPart,
    FunctionCall,
    ImagePart,
    Message,
    ProviderError,
    Source,
    TextPart,
    ThoughtLogEntry,
    Usage,
    WebSearch,
)

CheckName = Literal["text", "tools", "reasoning", "web_search", "image", "document"]

# A cap, not a cost: a thinking model (Gemini 2.5, 3) thinks before its first word by
# default, and a smaller cap could end the answer before it says anything.
OUTPUT_TOKENS = 1024
TIMEOUT = 30.0  # seconds for one check, both requests of the tool round included
SEARCH_TIMEOUT = 45.0  # a search runs before the answer starts
SYSTEM = ("This is an automated check of the connection. Follow the instruction exactly and "
          "answer in as few words as possible.")

CHECK_TOOL = "check_word"
TOOL_WORD = "marigold"
SHOWN_THOUGHTS = ("summary", "raw")  # a signature or redacted block shows nothing


@dataclass(frozen=True)
class Heard:
    """What one response streamed, as far as the checks judge it (text and reasoning cut
    at `bot.check.run.HEARD_CHARS`)."""

    text: str = ""
    thoughts: tuple[ThoughtLogEntry, ...] = ()
    calls: tuple[FunctionCall, ...] = ()
    sources: tuple[Source, ...] = ()
    searches: tuple[str, ...] = ()
    usage: Usage | None = None
    error: ProviderError | None = None


# A judge says what was missing (a catalog key), or None when the response passed.
Judge = Callable[[Heard], str | None]


@dataclass(frozen=True)
class Probe:
    """One check: its label, the request it sends, and how the last response is judged.
    With `tool_round` the first response must call `CHECK_TOOL`; the call is run and its
    result sent back as a turn's tool loop does, and the answer after it is judged."""

    name: CheckName
    label: str
    ask: Callable[[], ChatRequest]
    judge: Judge
    timeout: float = TIMEOUT
    tool_round: bool = False


def _asked(*parts: TextPart | ImagePart | DocumentPart, **options: object) -> ChatRequest:
    content = parts[0].text if len(parts) == 1 and isinstance(parts[0], TextPart) else list(parts)
    return ChatRequest(messages=[Message("user", content)], system=SYSTEM, max_output_tokens=OUTPUT_TOKENS,
                       **options)  # type: ignore[arg-type]


class _NoArguments(BaseModel):
    pass


async def _word_of_the_check(_args: _NoArguments, _context: ToolContext) -> str:
    return TOOL_WORD


# The one tool the tool check declares, run through the same registry and loop functions
# as the bot's own tools (`bot.tools.loop.execute_calls`, `history_for`).
CHECK_TOOLS = ToolRegistry([Tool(CHECK_TOOL, "Returns the word of this check. Call it when asked for the word.",
                                 _NoArguments, _word_of_the_check)])


def _text(heard: Heard) -> str | None:
    return None if heard.text.strip() else "commands.check.note.no_text"


def _says(word: str) -> Judge:
    def judge(heard: Heard) -> str | None:
        if not heard.text.strip():
            return "commands.check.note.no_text"
        return None if word.lower() in heard.text.lower() else "commands.check.note.missed"
    return judge


def called_check_tool(heard: Heard) -> str | None:
    """The first response of the tool round: a call of the check's tool."""
    return None if any(call.name == CHECK_TOOL for call in heard.calls) else "commands.check.note.no_call"


def _thoughts(heard: Heard) -> str | None:
    shown = any(t.kind in SHOWN_THOUGHTS and t.text.strip() for t in heard.thoughts)
    return None if shown else "commands.check.note.no_thoughts"


def _searched(heard: Heard) -> str | None:
    ran = bool(heard.sources or heard.searches or (heard.usage is not None and heard.usage.searches))
    return None if ran else "commands.check.note.no_search"


TEXT = Probe("text", "commands.check.name.text", lambda: _asked(TextPart("Reply with the single word: ready")),
             _text)
TOOLS = Probe("tools", "commands.check.name.tools",
              lambda: _asked(TextPart(f"Call the {CHECK_TOOL} tool, then reply with the word it returns."),
                             tools=CHECK_TOOLS.specs()),
              _says(TOOL_WORD), tool_round=True)
REASONING = Probe("reasoning", "commands.check.name.reasoning",
                  lambda: _asked(TextPart("Is 91 a prime number? Answer yes or no."), reasoning_effort="low"),
                  _thoughts)
WEB_SEARCH = Probe("web_search", "commands.check.name.web_search",
                   lambda: _asked(TextPart("Search the web for today's date and name the page you found it on."),
                                  web_search=WebSearch(max_searches=1)),
                   _searched, timeout=SEARCH_TIMEOUT)
IMAGE = Probe("image", "commands.check.name.image",
              lambda: _asked(TextPart("What colour is this image? Answer with one word."),
                             ImagePart("image/png", solid_png())),
              _says(IMAGE_COLOUR))
DOCUMENT = Probe("document", "commands.check.name.document",
                 lambda: _asked(TextPart("What word is written in this PDF? Answer with that word only."),
                                DocumentPart("application/pdf", word_pdf(), "check.pdf")),
                 _says(DOCUMENT_WORD))

# How a route searches the web, as the runner found it (`plan` reads it).


@dataclass(frozen=True)
class Planned:
    """One row of the check: a probe to send, the bot's search service to ask
    (`service`), or a skip with its reason (`skipped`, a catalog key)."""

    name: CheckName
    label: str
    probe: Probe | None = None
    service: bool = False
    skipped: str | None = None


def _skip(probe: Probe, note: str) -> Planned:
    return Planned(probe.name, probe.label, skipped=note)


def _web_search(search: SearchReach) -> Planned:
    if search == "native":
        return Planned(WEB_SEARCH.name, WEB_SEARCH.label, WEB_SEARCH)
    if search == "service":
        return Planned(WEB_SEARCH.name, WEB_SEARCH.label, service=True)
    return _skip(WEB_SEARCH, "commands.check.note.search_off" if search == "off"
                 else "commands.check.note.search_not_native")


def plan(caps: ModelCapabilities, search: SearchReach) -> list[Planned]:
    """Every row of the check in table order, from what the model takes (`caps`) and how
    the route searches (`search`)."""
    rows = [Planned(TEXT.name, TEXT.label, TEXT)]
    rows.append(Planned(TOOLS.name, TOOLS.label, TOOLS) if caps.tools else _skip(TOOLS, "commands.check.note.no_tools"))
    rows.append(Planned(REASONING.name, REASONING.label, REASONING) if caps.reasoning is not None
                else _skip(REASONING, "commands.check.note.no_reasoning"))
    rows.append(_web_search(search))
    rows.append(Planned(IMAGE.name, IMAGE.label, IMAGE) if caps.images
                else _skip(IMAGE, "commands.check.note.no_images"))
    rows.append(Planned(DOCUMENT.name, DOCUMENT.label, DOCUMENT) if caps.documents == "file"
                else _skip(DOCUMENT, "commands.check.note.pdf_as_text"))
    return rows
