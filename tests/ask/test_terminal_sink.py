"""The terminal sink under the real `MessageDelivery` as the terminal turn builds it (one
message, no Discord split), and the edits a terminal cannot take back (a rewrite, a
retracted answer)."""

from __future__ import annotations

import asyncio
import io

import pytest

from bot.terminal_sink import TERMINAL_MESSAGE_LIMIT, WITHDRAWN, TerminalSink
from stream.buffer import STREAMING_INDICATOR as I
from stream.buffer import MessageDelivery
from stream.pacing import EditBudget
from stream.sink import EmbedSpec
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
    message = await sink.send("```py\na = 1\n```" + I)  # the renderer closed the open fence
    await sink.edit(message, "```py\na = 1\nb = 2\n```" + I)
    await sink.edit(message, "```py\na = 1\nb = 2\n```")  # the final text: the model's own closer
    sink.close()
    assert out.getvalue() == "```py\na = 1\nb = 2\n```\n"


async def test_a_shorter_view_prints_nothing_and_the_next_extension_no_repeat() -> None:
    out = io.StringIO()
    sink = TerminalSink(out)
    message = await sink.send("Hello world" + I)
    await sink.edit(message, "Hello")
    await sink.edit(message, "Hello world, again.")
    sink.close()
    assert out.getvalue() == "Hello world, again.\n"


async def test_a_note_extends_and_a_rewrite_prints_from_where_it_differs() -> None:
    out = io.StringIO()
    sink = TerminalSink(out)
    message = await sink.send("Partial answ" + I)
    await sink.edit(message, "Partial answer")
    await sink.edit(message, "Partial answer\n\n*interrupted*")
    await sink.edit(message, "Partial answer\n\n*stopped*")  # not an extension: the terminal keeps the older characters
    sink.close()
    assert out.getvalue() == "Partial answer\n\n*interrupted*stopped*\n"


async def test_a_retracted_answer_is_said_and_the_retry_starts_on_its_own_line() -> None:
    out = io.StringIO()
    sink = TerminalSink(out)
    first = await sink.send("The first try" + I)
    await sink.delete(first)
    await sink.send("The second try.")
    sink.close()
    assert out.getvalue() == f"The first try\n{WITHDRAWN}\nThe second try.\n"


async def test_an_embed_is_headline_detail_and_tips_on_the_error_stream() -> None:
    out, err = io.StringIO(), io.StringIO()
    sink = TerminalSink(out, err)
    message = await sink.send("Half an answ" + I)
    await sink.edit(message, "Half an answer")
    await sink.send_embed(EmbedSpec(title="The provider did not accept the key",
                                    description="OpenAI did not accept the API key.\n\nDetail.",
                                    fields=[("What you can do", "• Check the key.\n• Try another model.")]))
    sink.close()
    assert out.getvalue() == "Half an answer\n"
    assert err.getvalue() == ("The provider did not accept the key\nOpenAI did not accept the API key.\n\nDetail.\n"
                              "What you can do\n• Check the key.\n• Try another model.\n")
