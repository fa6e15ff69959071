"""Image routes' wire formats: what the bot asks an image model for (`ImageAsk`), what
comes back (`DrawnImage`), and a provider's refusal (`ImageRefused`).

`openai_images.py` speaks OpenAI's Images API (`images/generations`, and `images/edits`
when the ask carries an image to change) through the official `openai` SDK, for OpenAI and
OpenAI-compatible servers. Nothing here knows Discord, limits or usage: `bot/capabilities/
images/` decides who may draw what and posts the result.
"""

from providers.images.ask import DrawnImage, ImageAsk, ImageFailed, ImageRefused

__all__ = ["DrawnImage", "ImageAsk", "ImageFailed", "ImageRefused"]
