"""Continuing an answer cut by the output-token cap (a `Message` with `partial_answer`).

The answer so far goes back as the assistant's turn; each family says "go on" in the
form it takes, so the stream carries only the new text and nothing above `providers/`
knows the difference:

- Gemini: the contents simply end with the `model` turn; the model continues it
  (`providers/gemini/request.py::build_contents`).
- Anthropic, where the model takes a prefill: the messages end with the `assistant`
  turn, its trailing whitespace stripped (`providers/anthropic_native/request.py::
  build_messages`). Otherwise, and with thinking on, the OpenAI-compatible form below
  (`providers/anthropic_native/models.py::takes_prefill`).
- OpenAI-compatible: chat completions have no prefill, so the assistant turn is followed
  by a short user turn asking to go on (`providers/openai_compat/request.py::build_messages`).
"""

from __future__ import annotations

from collections.abc import Sequence

from providers.types import Message

# An instruction to the model, never shown to members: English is understood everywhere,
# and the answer keeps the language it was written in.
CONTINUE_ASK = (
    "Your previous answer was cut off because it reached the length limit. Continue it exactly "
    "where it stopped, mid-sentence or mid-word if need be: do not repeat anything already "
    "written, and add no preamble or comment."
)


def ends_with_partial_answer(messages: Sequence[Message]) -> bool:
    """Whether the request's last turn is an answer the model is to continue (a prefill)."""
    return bool(messages) and messages[-1].partial_answer
