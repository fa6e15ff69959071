"""Scripted OpenAI-format streams for the chat end-to-end tests and the delivery bench."""

from __future__ import annotations

from typing import Any

from tests.fakes.provider_server import Reply


def long_answer_with_code(total: int = 6000) -> str:
    """Prose, a long fenced Python block that a 2,000-character message cannot hold, more prose."""
    prose = ("Streaming answers must arrive in order and in full. This paragraph is filler "
             "that reads like an explanation of the code below, sentence after sentence. ")
    code_lines = [f"    result_{i} = compute(value_{i}, factor={i})  # step {i}" for i in range(60)]
    code = "```python\ndef pipeline():\n" + "\n".join(code_lines) + "\n    return result_0\n```"
    head = (prose * 6).strip()
    text = f"{head}\n\n{code}\n\n"
    tail_unit = "The end is near, and every word of it must still be delivered. "
    while len(text) < total:
        text += tail_unit
    return text[:total].rstrip() + " Done."


def chunks_of(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def openai_events(pieces: list[str], *, reasoning: list[str] = (), finish: str | None = "stop",
                  model: str = "fake-model") -> list[dict[str, Any]]:
    """chat.completion.chunk payloads: optional `reasoning_content` first, then content pieces."""
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": r}) for r in reasoning]
    events += [chunk({"content": p}) for p in pieces]
    if finish is not None:
        events.append(chunk({}, finish))
        events.append({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
                       "model": model, "choices": [],
                       "usage": {"prompt_tokens": 12, "completion_tokens": 345, "total_tokens": 357}})
    return events


def openai_stream(text: str, *, piece: int = 40, event_delay: float = 0.0,
                  reasoning: list[str] = (), **options: Any) -> Reply:
    return Reply.sse(openai_events(chunks_of(text, piece), reasoning=list(reasoning)),
                     event_delay=event_delay, **options)


def openai_midstream_error(text: str, *, piece: int = 40, event_delay: float = 0.0) -> Reply:
    """Some text, then an OpenAI-style `{"error": ...}` data event (a mid-stream failure)."""
    events: list[Any] = openai_events(chunks_of(text, piece), finish=None)
    events.append({"error": {"message": "The server had an error while processing your request.",
                             "type": "server_error", "code": "server_error"}})
    return Reply.sse(events, done=False, event_delay=event_delay)
