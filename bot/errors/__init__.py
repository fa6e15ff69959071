"""How a failed turn is shown on Discord: one lookup on the failure's kind.

The turn calls `error_embed(error, ErrorScene(...))`; the tables (title, tips, colour
by kind) live in `tables`, the wording and credential scoping in `presentation`, the
Discord layout in `embed`.
"""

from bot.errors.embed import build_error_embed_spec, error_embed
from bot.errors.presentation import ErrorPresentation, ErrorScene, resolve_presentation
from bot.errors.tables import possible_keys

__all__ = [
    "ErrorPresentation", "ErrorScene", "build_error_embed_spec", "error_embed", "possible_keys",
    "resolve_presentation",
]
