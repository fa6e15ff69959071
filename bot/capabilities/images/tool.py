"""The `draw_image` tool: the text model may decide to draw ("draw me a cat"). The image
is drawn for the member who asked, within their daily limit, on the server's image route
or the operator's; it is posted under the answer with its prompt line (the capability's `after`).
One image per answer. A refusal, the limit or a failure goes back to the model as the
tool's error (in English, the model's working language), so it can tell the member."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from bot.capabilities.images.drawing import DEFAULT_SIZE, MAX_PROMPT
from bot.capabilities.images.service import DrawPlace, Images
from bot.tools.registry import Tool, ToolContext, ToolError
from providers.i18n import t
from providers.images import DrawnImage, ImageAsk

DRAW_IMAGE_TOOL = "draw_image"
DRAW_IMAGE_DESCRIPTION = (
    "Draw one image from a text description and post it under your answer. Use only when the member "
    "asks for a picture, drawing, illustration or photo to be made. Describe the image fully in English.")
PER_ANSWER = 1  # images one answer may draw


class DrawImageArgs(BaseModel):
    prompt: str = Field(..., min_length=1, max_length=MAX_PROMPT, description=(
        "What to draw: subject, style, colours and composition, in one description."))
    size: Literal["1024x1024", "1536x1024", "1024x1536"] = Field(DEFAULT_SIZE, description=(
        "1024x1024 square (default), 1536x1024 landscape or 1024x1536 portrait."))


@dataclass
class Drawn:
    """What one answer's tool drew, for the lines under it."""

    images: list[tuple[str, DrawnImage]] = field(default_factory=list)


@dataclass(frozen=True)
class DrawingFor:
    """Whom one answer draws for, and where (route, server, its bound)."""

    images: Images
    place: DrawPlace
    asker_id: int


async def draw_image_tool(args: DrawImageArgs, _context: ToolContext, *, drawing_for: DrawingFor,
                          drawn: Drawn) -> str:
    """Draw it for the asker (kept in `drawn` for the answer), or raise the reason as ToolError."""
    if len(drawn.images) >= PER_ANSWER:
        raise ToolError(f"Only {PER_ANSWER} image can be drawn per answer; it is already posted.")
    who = drawing_for
    drawing = await who.images.draw_for(who.asker_id, ImageAsk(args.prompt, args.size), who.place)
    if drawing.image is None:
        raise ToolError(t(drawing.line or "chat.images.failed_failed", "en", **drawing.params))
    drawn.images.append((args.prompt, drawing.image))
    return "The image was drawn; it is posted under your answer with its prompt. Do not link or describe a file."


def draw_image_tool_for(drawing_for: DrawingFor, drawn: Drawn) -> Tool:
    """The tool bound to one answer: its asker, route and server bound, and what it drew."""
    run = functools.partial(draw_image_tool, drawing_for=drawing_for, drawn=drawn)
    return Tool(DRAW_IMAGE_TOOL, DRAW_IMAGE_DESCRIPTION, DrawImageArgs, run)
