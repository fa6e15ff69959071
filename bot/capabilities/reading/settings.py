"""Reading's per-server setting: whether the bot reads the links in members' questions.
It costs no provider anything and follows only links a member wrote, so it is on until a
manager turns it off; the operator's READ_LINKS off turns it off everywhere, which the
reply and the /status line say."""

from __future__ import annotations

from bot.capabilities.declared import Place, Said, Setting, SettingsDeclaration, Values


async def replied(values: Values, place: Place) -> list[Said]:
    if not values["read_links"]:
        return [("commands.reply.read_links_off", {})]
    if place.operator.READ_LINKS:
        return [("commands.reply.read_links_on", {})]
    return [("commands.reply.read_links_operator_off", {})]


async def shown(values: Values, place: Place) -> list[Said]:
    if not place.operator.READ_LINKS:
        return [("commands.status.read_links_operator_off", {})]
    return [("commands.status.read_links_on" if values["read_links"] else "commands.status.read_links_off", {})]


READING = SettingsDeclaration("reading", (
    Setting("read_links", bool, True, reply=replied, status=shown),
))
