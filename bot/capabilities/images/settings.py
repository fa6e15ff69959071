"""Images' per-server switch: whether members may draw here at all (on by default, where
an image route exists). How many images one member may draw per day is `/limits set
images_per_day` (one place for every limit), the lowest of it and the operator's
`IMAGES_PER_DAY` applying. The reply and the /status line say whether images are on, the
server's own image route (`/model image set`) when it has one, and that the bot has no image
route when it has none."""

from __future__ import annotations

from bot.capabilities.declared import Place, Said, Setting, SettingsDeclaration, Values
from bot.capabilities.images.route_storage import ImageTarget, image_target_of


async def _own_route(place: Place) -> ImageTarget | None:
    return await image_target_of(place.session, place.guild_id) if place.guild_id is not None else None


def _no_route(place: Place, own: ImageTarget | None) -> bool:
    operator = place.operator
    return own is None and not (operator.DEFAULT_IMAGE_PROVIDER and operator.DEFAULT_IMAGE_MODEL)


async def replied(values: Values, place: Place) -> list[Said]:
    if not values["images"]:
        return [("commands.reply.images_off", {})]
    lines: list[Said] = [("commands.reply.images_on", {})]
    if _no_route(place, await _own_route(place)):
        lines.append(("commands.reply.images_no_route", {}))
    return lines


async def shown(values: Values, place: Place) -> list[Said]:
    if not values["images"]:
        return [("commands.status.images_off", {})]
    own = await _own_route(place)
    if _no_route(place, own):
        return [("commands.status.images_no_route", {})]
    if own is not None:
        return [("commands.status.images_on_server_route", {"provider": own.provider, "model": own.model})]
    return [("commands.status.images_on", {})]


IMAGES = SettingsDeclaration("images", (
    Setting("images", bool, True, reply=replied, status=shown),
))


def server_images(values: Values | None) -> bool:
    """Whether drawing is allowed here, from the server's values (None: a DM, or a server
    whose settings are not known: allowed)."""
    return True if values is None else bool(values["images"])
