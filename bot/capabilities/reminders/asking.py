"""Whether a question may ask for a reminder (English and Japanese): only then is an answer
offered the `set_reminder` tool, so every other request is spared its schema (about 100
input tokens a request, and the answer's share of memory). Pure: a question's text in,
True or False out. Generous on purpose: a false match only offers the tool, a missed one
leaves `/remind set`.
"""

from __future__ import annotations

import re

_ENGLISH = re.compile(
    r"\b(?:remind(?:er|ers)?|alarm|timer|(?:ping|nudge|alert|notify|wake|tell|message) me)\b", re.IGNORECASE)
_JAPANESE = re.compile(r"リマインド|思い出させ|アラーム|タイマー|知らせて|通知して|(?:後|時|分|日)に(?:教えて|声をかけて)")


def asks_for_reminder(text: str) -> bool:
    """True when `text` may ask the bot to remind the asker of something later."""
    return bool(_ENGLISH.search(text) or _JAPANESE.search(text))
