"""Listening's per-server setting: how long one member's back-to-back messages wait to
become one question (0: not at all). /status shows the batch window with the listen
channels (`bot.cogs.access.status_lines`), so it has no line of its own here.
"""

from __future__ import annotations

from bot.capabilities.declared import Place, Said, Setting, SettingsDeclaration, Values, no_line
from bot.repo.conversation import DEFAULT_BATCH_SECONDS, MAX_BATCH_SECONDS


async def batch_replied(values: Values, place: Place) -> list[Said]:
    if values["batch_seconds"] > 0:
        return [("commands.reply.batch_set", {"seconds": f"{values['batch_seconds']:g}"})]
    return [("commands.reply.batch_off", {})]


LISTENING = SettingsDeclaration("listening", (
    Setting("batch_seconds", float, DEFAULT_BATCH_SECONDS, 0, MAX_BATCH_SECONDS, option="seconds",
            reply=batch_replied, status=no_line),
))
