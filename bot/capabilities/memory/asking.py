"""Whether a question asks the bot to remember something (English and Japanese): with
memory off, the answer then points the member to `/memory on` instead of pretending it
will remember. Pure: a question's text in, True or False out.

Only requests count, not questions about the past: "remember that I'm vegan", "please
remember…", "don't forget…", "keep in mind…", "覚えておいて", "忘れないで" do; "do you
remember the film?", "覚えてる？" do not.
"""

from __future__ import annotations

import re

_ENGLISH = re.compile(
    r"(?:^|[.!?;,:\n]\s*|\b(?:please|pls|and|also|so|now|hey|ok|okay|can you|could you|would you|will you)\s+)"
    r"(?:remember|memori[sz]e)\b(?!\s+(?:when|what|how|who|the time)\b)"
    r"|\b(?:don'?t|do not|never) forget\b"
    r"|\bkeep in mind\b"
    r"|\b(?:add|save|put) (?:this|that|it)\b.{0,20}\b(?:to|in) (?:your|the) memory\b",
    re.IGNORECASE,
)
_JAPANESE = re.compile(r"覚えて(?:おいて|おけ|て|ね|ほしい|欲しい|ください|下さい|くれ|[。！!、]|$)"
                       r"|記憶して|忘れないで|メモして")


def asks_to_remember(text: str) -> bool:
    """True when `text` asks the bot to keep something for later."""
    return bool(_ENGLISH.search(text) or _JAPANESE.search(text))
