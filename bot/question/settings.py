"""The conversation's per-server settings, which every answer reads (not a capability's):
how many earlier messages the model sees, and whether a mention in a text channel opens a
thread for its answer. /status shows both in one line."""

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
from bot.repo.conversation import DEFAULT_HISTORY_MESSAGES, MAX_HISTORY_MESSAGES


async def history_replied(values: Values, place: Place) -> list[Said]:
    return [("commands.reply.history_set", {"count": values["history"]})]


async def conversation_shown(values: Values, place: Place) -> list[Said]:
    threads = Text("commands.status.threads_on" if values["threads"] else "commands.status.threads_off")
    return [("commands.status.conversation", {"count": values["history"], "threads": threads})]


CONVERSATION = SettingsDeclaration("conversation", (
    Setting("history", int, DEFAULT_HISTORY_MESSAGES, 0, MAX_HISTORY_MESSAGES, option="messages",
            reply=history_replied, status=conversation_shown),
    Setting("threads", bool, False, status=no_line),
))
