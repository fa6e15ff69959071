"""Listening's per-server settings: how many earlier messages of a conversation the model
sees, whether a mention in a text channel opens a thread for its answer, and how long one
member's back-to-back messages wait to become one question (0: not at all).

/status shows the history depth and the thread switch in one line, and the batch window
with the listen channels (`bot.cogs.access.status_lines`), so those two have no line of
their own here.
"""

from __future__ import annotations

from bot.capabilities.declared import (
    Place,
    Said,
    Setting,
    SettingsDeclaration,
    Text,
    Values,
    no_line,
)
from bot.repo.conversation import (
    DEFAULT_BATCH_SECONDS,
    DEFAULT_HISTORY_MESSAGES,
    MAX_BATCH_SECONDS,
    MAX_HISTORY_MESSAGES,
)


async def history_replied(values: Values, place: Place) -> list[Said]:
    return [("commands.reply.history_set", {"count": values["history"]})]


async def conversation_shown(values: Values, place: Place) -> list[Said]:
    threads = Text("commands.status.threads_on" if values["threads"] else "commands.status.threads_off")
    return [("commands.status.conversation", {"count": values["history"], "threads": threads})]


async def batch_replied(values: Values, place: Place) -> list[Said]:
    if values["batch_seconds"] > 0:
        return [("commands.reply.batch_set", {"seconds": f"{values['batch_seconds']:g}"})]
    return [("commands.reply.batch_off", {})]


LISTENING = SettingsDeclaration("listening", (
    Setting("history", int, DEFAULT_HISTORY_MESSAGES, 0, MAX_HISTORY_MESSAGES, option="messages",
            reply=history_replied, status=conversation_shown),
    Setting("threads", bool, False, status=no_line),
    Setting("batch_seconds", float, DEFAULT_BATCH_SECONDS, 0, MAX_BATCH_SECONDS, option="seconds",
            reply=batch_replied, status=no_line),
))
