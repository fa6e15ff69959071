"""Images' seams: the `draw_image` tool offered to every answer when the operator named
an image route, and, after the answer's text, what it drew: the prompt line under the
answer and the image as a file below it."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field

from bot.capabilities.images.posting import file_name, prompt_line
from bot.capabilities.images.service import Images
from bot.capabilities.images.settings import server_images
from bot.capabilities.images.tool import Drawn, draw_image_tool_for
from bot.edge.sink import DiscordMessageSink
from bot.question.seams import AnswerPart, Joining
from bot.tools import ToolLoop
from bot.turn.seams import TurnEnding
from stream.sink import SinkError

log = logging.getLogger(__name__)


class ImageDrawing:
    """Joins every answer while the operator's image route exists (read once, at the
    first answer, from the bot's settings), where the server did not turn images off."""

    def __init__(self) -> None:
        self._images: Images | None = None
        self._read = False

    def join(self, joining: Joining) -> AnswerPart | None:
        if not self._read:
            services = joining.services
            self._images, self._read = Images.of(services.settings, services.sessions), True
        server = joining.question.config.server
        allowed = server_images(server.settings.by_capability["images"] if server else None)
        if self._images is None or not allowed:
            return None
        return DrawingPart(joining, self._images, server.limits.images_per_day if server else None)


@dataclass
class DrawingPart(AnswerPart):
    """One answer's drawing: the tool bound to its asker, and what it drew."""

    joining: Joining
    images: Images
    server_limit: int | None
    drawn: Drawn = field(default_factory=Drawn)

    def tools(self, loop: ToolLoop) -> ToolLoop:
        tool = draw_image_tool_for(self.images, self.joining.question.asker.id, self.drawn, self.server_limit)
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
