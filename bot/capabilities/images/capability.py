"""Images' seams: the `draw_image` tool offered to every answer that has an image route
(the server's own or the operator's), and, after the answer's text, what it drew: the prompt line under the
answer and the image as a file below it."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field

from bot.capabilities.images.posting import file_name, prompt_line
from bot.capabilities.images.service import DrawPlace, Images
from bot.capabilities.images.settings import server_images
from bot.capabilities.images.tool import DrawingFor, Drawn, draw_image_tool_for
from bot.edge.sink import DiscordMessageSink
from bot.question.seams import AnswerPart, Joining
from bot.tools import ToolLoop
from bot.turn.seams import TurnEnding
from stream.sink import SinkError

log = logging.getLogger(__name__)


class ImageDrawing:
    """Joins every answer that has an image route (the server's own, else the operator's,
    read from the bot's settings at the first answer), where the server did not turn
    images off."""

    def __init__(self) -> None:
        self._images: Images | None = None

    def join(self, joining: Joining) -> AnswerPart | None:
        if self._images is None:
            services = joining.services
            self._images = Images.of(services.settings, services.sessions, getattr(services.client, "vault", None))
        server = joining.question.config.server
        if not server_images(server.settings.by_capability["images"] if server else None):
            return None
        route = self._images.route_for(server)
        if isinstance(route, tuple):  # no route here, or the server's has no usable key
            return None
        place = DrawPlace(route, server.facts.guild_id, server.limits.images_per_day) if server else DrawPlace(route)
        return DrawingPart(joining, DrawingFor(self._images, place, joining.question.asker.id))


@dataclass
class DrawingPart(AnswerPart):
    """One answer's drawing: the tool bound to its asker and route, and what it drew."""

    joining: Joining
    drawing_for: DrawingFor
    drawn: Drawn = field(default_factory=Drawn)

    def tools(self, loop: ToolLoop) -> ToolLoop:
        tool = draw_image_tool_for(self.drawing_for, self.drawn)
        return dataclasses.replace(loop, registry=loop.registry.adding(tool))

    async def after(self, ending: TurnEnding) -> None:
        """The prompt line under the answer, then the image as a file below it."""
        question = self.joining.question
        channel = question.delivery.channel if question.delivery is not None else question.message.channel
        sink = DiscordMessageSink(channel, client=self.joining.services.client)
        for prompt, image in self.drawn.images:
            await ending.delivery.add_note(prompt_line(prompt, ending.locale))
            try:
                await sink.send_file(file_name(image), image.data)
            except SinkError as exc:
                log.warning("a drawn image could not be posted: %s", exc)
