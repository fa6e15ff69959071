"""Web search's per-server settings: the switch, off until a manager turns it on (each
search costs the server and shows the model pages of the open web), and the searches
one answer may run, and whether a grounded answer ends with its sources line (on unless a
manager turns it off). The reply and the /status line say plainly when the server's first
model can search neither by itself nor through the bot's search service."""

from __future__ import annotations

from bot.capabilities.declared import Place, Said, Setting, SettingsDeclaration, Values
from bot.capabilities.web_search.answer import search_reach
from bot.repo.routes import resolve_server_route

DEFAULT_MAX_SEARCHES = 3
MAX_SEARCHES = 10  # more per answer costs much and rarely adds a source the first ones missed


async def model_that_cannot_search(place: Place) -> str | None:
    """The server's first model when it neither searches natively nor has the bot's
    search service to call (SEARCH_BACKEND): with search on, no answer would search."""
    route = await resolve_server_route(place.session, place.operator, place.guild_id)
    if not route.chain:
        return None
    first = route.chain[0]
    reach = search_reach(True, place.capabilities(first), place.operator.SEARCH_BACKEND is not None)
    return first.model if reach == "none" else None


async def replied(values: Values, place: Place) -> list[Said]:
    if not values["web_search"]:
        return [("commands.reply.web_search_off", {})]
    lines: list[Said] = [("commands.reply.web_search_on", {"count": values["max_searches"]})]
    unable = await model_that_cannot_search(place)
    if unable is not None:
        lines.append(("commands.reply.web_search_cannot", {"model": unable}))
    return lines


async def shown(values: Values, place: Place) -> list[Said]:
    if not values["web_search"]:
        return [("commands.status.web_search_off", {})]
    lines: list[Said] = [("commands.status.web_search_on", {"count": values["max_searches"]})]
    unable = await model_that_cannot_search(place)
    if unable is not None:
        lines.append(("commands.status.web_search_cannot", {"model": unable}))
    return lines


WEB_SEARCH = SettingsDeclaration("web_search", (
    Setting("web_search", bool, False, reply=replied, status=shown),
    Setting("max_searches", int, DEFAULT_MAX_SEARCHES, 1, MAX_SEARCHES, option="max_searches",
            part_of="web_search"),
    Setting("sources_line", bool, True),
))
