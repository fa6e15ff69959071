"""Images' per-server settings: whether members may draw here at all (on by default,
where the operator named an image route), and how many images one member may draw per
UTC day (at most the operator's `IMAGES_PER_DAY`; 0: only the operator's bound). The
reply and the /status line say so, and that the bot has no image route when it has none."""

from __future__ import annotations

from bot.capabilities.declared import Place, Said, Setting, SettingsDeclaration, Values

DEFAULT_PER_DAY = 10
MAX_PER_DAY = 1000


def _no_route(place: Place) -> bool:
    operator = place.operator
    return not (operator.DEFAULT_IMAGE_PROVIDER and operator.DEFAULT_IMAGE_MODEL)


async def replied(values: Values, place: Place) -> list[Said]:
    if not values["images"]:
        return [("commands.reply.images_off", {})]
    lines: list[Said] = [("commands.reply.images_on", {"count": values["images_per_day"]})]
    if _no_route(place):
        lines.append(("commands.reply.images_no_route", {}))
    return lines


async def shown(values: Values, place: Place) -> list[Said]:
    if not values["images"]:
        return [("commands.status.images_off", {})]
    if _no_route(place):
        return [("commands.status.images_no_route", {})]
    return [("commands.status.images_on", {"count": values["images_per_day"]})]


IMAGES = SettingsDeclaration("images", (
    Setting("images", bool, True, reply=replied, status=shown),
    Setting("images_per_day", int, DEFAULT_PER_DAY, 0, MAX_PER_DAY, option="images_per_day", part_of="images"),
))


def server_images(values: Values | None) -> tuple[bool, int | None]:
    """(drawing allowed here, the server's own daily bound or None) from its values
    (None: a DM, or a server whose settings are not known: the operator's bound alone)."""
    if values is None:
        return True, None
    return bool(values["images"]), int(values["images_per_day"]) or None
