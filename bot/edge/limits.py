"""Discord's size limits, in one place for the whole bot.

Discord rejects a message, embed or modal that exceeds any of these, so every module
that builds one imports its limits from here. The stream layer cannot import the bot, so
the limits it needs itself are defined there once and re-exported here.
"""

from __future__ import annotations

from stream.splitter import DISCORD_MESSAGE_LIMIT as MESSAGE_LIMIT
from stream.thought_log import EMBED_DESCRIPTION_LIMIT, EMBED_TOTAL_LIMIT

# Embeds (the total counts title, description, field names and values, footer, author).
EMBED_TITLE_LIMIT = 256
EMBED_FIELD_NAME_LIMIT = 256
EMBED_FIELD_VALUE_LIMIT = 1024
EMBED_FIELD_COUNT_LIMIT = 25
EMBED_FOOTER_LIMIT = 2048
EMBED_AUTHOR_NAME_LIMIT = 256
EMBEDS_PER_MESSAGE = 10

# Modals and their text inputs.
MODAL_TITLE_LIMIT = 45
TEXT_INPUT_LABEL_LIMIT = 45
TEXT_INPUT_PLACEHOLDER_LIMIT = 100
TEXT_INPUT_VALUE_LIMIT = 4000

# Application commands.
AUTOCOMPLETE_CHOICES_LIMIT = 25
CHOICE_NAME_LIMIT = 100
COMMAND_DESCRIPTION_LIMIT = 100

# Channels.
THREAD_NAME_LIMIT = 100

__all__ = [
    "AUTOCOMPLETE_CHOICES_LIMIT", "CHOICE_NAME_LIMIT", "COMMAND_DESCRIPTION_LIMIT",
    "EMBEDS_PER_MESSAGE", "EMBED_AUTHOR_NAME_LIMIT", "EMBED_DESCRIPTION_LIMIT",
    "EMBED_FIELD_COUNT_LIMIT", "EMBED_FIELD_NAME_LIMIT", "EMBED_FIELD_VALUE_LIMIT",
    "EMBED_FOOTER_LIMIT", "EMBED_TITLE_LIMIT", "EMBED_TOTAL_LIMIT", "MESSAGE_LIMIT",
    "MODAL_TITLE_LIMIT", "TEXT_INPUT_LABEL_LIMIT", "TEXT_INPUT_PLACEHOLDER_LIMIT",
    "TEXT_INPUT_VALUE_LIMIT", "THREAD_NAME_LIMIT",
]
