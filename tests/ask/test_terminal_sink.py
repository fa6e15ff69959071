"""The terminal sink under the real `MessageDelivery` as the terminal turn builds it (one
message, no Discord split), and the edits a terminal cannot take back (a rewrite, a
retracted answer)."""

from __future__ import annotations

import asyncio
import io
import time

import pytest

from bot.terminal_sink import TERMINAL_MESSAGE_LIMIT, WITHDRAWN, TerminalSink, terminal_safe
from stream.buffer import STREAMING_INDICATOR as I
from stream.buffer import MessageDelivery
from stream.pacing import EditBudget
from stream.sink import INTERIM, EmbedSpec
from tests.support.data_openai import chunks_of, long_answer_with_code


async def delivered(text: str, piece: int, pause: float) -> tuple[str, int]:
    """`text` streamed through a real MessageDelivery into the sink: what the terminal shows."""
    out = io.StringIO()
    sink = TerminalSink(out)
    delivery = MessageDelivery(sink, budget=EditBudget(limit=1000, window=1.0, reserve=0, margin=0.0),
                               limit=TERMINAL_MESSAGE_LIMIT, max_messages=1)
    for part in chunks_of(text, piece):
        delivery.append(part)
        await asyncio.sleep(pause)
    await delivery.finish()
    sink.close()
    return out.getvalue(), len(delivery.messages)


@pytest.mark.parametrize(("piece", "pause"), [(7, 0.0), (30, 0.001), (500, 0.01), (6000, 0.0)])
async def test_a_long_answer_with_code_prints_whole_in_order_and_once(piece: int, pause: float) -> None:
    text = long_answer_with_code()
    shown, messages = await delivered(text, piece, pause)
    assert messages == 1
    assert shown == text.strip() + "\n"  # every character once, in order: no provisional closer, no indicator


async def test_an_open_code_block_prints_once_while_it_grows() -> None:
    out = io.StringIO()
    sink = TerminalSink(out)
    message = await sink.send("```py\na = 1\n```" + I, write=INTERIM)  # the renderer closed the open fence
    await sink.edit(message, "```py\na = 1\nb = 2\n```" + I, write=INTERIM)
    await sink.edit(message, "```py\na = 1\nb = 2\n```")  # the final text: the model's own closer
    sink.close()
    assert out.getvalue() == "```py\na = 1\nb = 2\n```\n"


async def test_a_shorter_view_prints_nothing_and_the_next_extension_no_repeat() -> None:
    out = io.StringIO()
    sink = TerminalSink(out)
    message = await sink.send("Hello world" + I, write=INTERIM)
    await sink.edit(message, "Hello")
    await sink.edit(message, "Hello world, again.")
    sink.close()
    assert out.getvalue() == "Hello world, again.\n"


async def test_a_note_extends_and_a_rewrite_prints_from_where_it_differs() -> None:
    out = io.StringIO()
    sink = TerminalSink(out)
    message = await sink.send("Partial answ" + I, write=INTERIM)
    await sink.edit(message, "Partial answer")
    await sink.edit(message, "Partial answer\n\n*interrupted*")
    await sink.edit(message, "Partial answer\n\n*stopped*")  # not an extension: the terminal keeps the older characters
    sink.close()
    assert out.getvalue() == "Partial answer\n\n*interrupted*stopped*\n"


async def test_a_retracted_answer_is_said_and_the_retry_starts_on_its_own_line() -> None:
    out = io.StringIO()
    sink = TerminalSink(out)
    first = await sink.send("The first try" + I, write=INTERIM)
    await sink.delete(first)
    await sink.send("The second try.")
    sink.close()
    assert out.getvalue() == f"The first try\n{WITHDRAWN}\nThe second try.\n"


async def test_an_embed_is_headline_detail_and_tips_on_the_error_stream() -> None:
    out, err = io.StringIO(), io.StringIO()
    sink = TerminalSink(out, err)
    message = await sink.send("Half an answ" + I, write=INTERIM)
    await sink.edit(message, "Half an answer")
    await sink.send_embed(EmbedSpec(title="The provider did not accept the key",
                                    description="OpenAI did not accept the API key.\n\nDetail.",
                                    fields=[("What you can do", "• Check the key.\n• Try another model.")]))
    sink.close()
    assert out.getvalue() == "Half an answer\n"
    assert err.getvalue() == ("The provider did not accept the key\nOpenAI did not accept the API key.\n\nDetail.\n"
                              "What you can do\n• Check the key.\n• Try another model.\n")


# ---- what a model writes cannot drive the terminal ------------------------------------------------
HOSTILE = ("Title\x1b]0;pwned\x07 set, screen\x1b[2J cleared, \x9b31mred\x9b0m, \x1b]8;;http://evil.example"
           "\x1b\\link\x1b]8;;\x1b\\, line\rover\x08, \x1bcreset, kept\ttab\nnext")
SHOWN = "Title set, screen cleared, red, link, lineover, reset, kept\ttab\nnext"


@pytest.mark.parametrize("piece", [1, 3, 7, 500])
async def test_control_sequences_are_left_out_even_when_cut_across_edits(piece: int) -> None:
    shown, _messages = await delivered(HOSTILE, piece, 0.0)
    assert shown == SHOWN + "\n"


async def test_an_unfinished_sequence_is_held_until_it_ends_or_the_answer_does() -> None:
    out = io.StringIO()
    sink = TerminalSink(out)
    message = await sink.send("ab\x1b]0;pw" + I, write=INTERIM)
    assert out.getvalue() == "ab"  # its parameters are not printed as text while it may still end
    await sink.edit(message, "ab\x1b]0;pwned\x07cd" + I, write=INTERIM)
    assert out.getvalue() == "abcd"
    await sink.edit(message, "abcd\x1b]0;never ends")
    sink.close()
    assert out.getvalue() == "abcd0;never ends\n"  # at the end: shown as text, its ESC ]  gone


async def test_errors_and_file_names_are_stripped_too() -> None:
    out, err = io.StringIO(), io.StringIO()
    sink = TerminalSink(out, err)
    await sink.send_embed(EmbedSpec("Error\x1b[2J", "the provider said\x1b]0;pwned\x07 no", 0))
    await sink.send_file("log\x9b2J.txt", b"x")
    assert "\x1b" not in err.getvalue() and "\x9b" not in err.getvalue() and "pwned" not in err.getvalue()
    assert "Error" in err.getvalue() and "the provider said no" in err.getvalue()


def test_a_hostile_text_is_stripped_in_linear_time() -> None:
    started = time.perf_counter()
    assert terminal_safe("\x9dx" * 500_000) == "x" * 500_000
    assert terminal_safe("\x1b]x" * 300_000 + "\x07") == "x" * 299_999  # only the last one ends
    assert time.perf_counter() - started < 2.0
