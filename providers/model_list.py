"""A provider's own list of its models, as the bot reads it (pure: no I/O, no SDK).

The bot offers these names while a member types a model (`bot/catalog/`), and
OpenRouter's list says what each of its models takes (`supported_parameters`, which
becomes `RouteHints.listed_parameters`). Each family lists through its adapter
(`SdkStreamAdapter.list_models`: the SDK client an answer would use, so the same address
checks, no redirects and the key on each request) and reads each page with its own
pure parser (`providers/<family>/model_list.py`) into a `ModelPage`.

What is read is bounded, whatever the endpoint sends: a page's body is cut after
MAX_PAGE_BYTES (the models before the cut count, the one the cut went through does not,
and no page follows a cut one), at most MAX_PAGES pages are asked for and MAX_LISTED
models kept, all within LIST_SECONDS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jiter

from providers.types import ProviderError

MAX_PAGE_BYTES = 4 * 1024 * 1024  # OpenRouter's whole list, the largest one, is well below
MAX_PAGES = 10
MAX_LISTED = 5000
LIST_SECONDS = 5.0  # the whole listing, every page
MAX_ID_CHARS = 256  # a longer "id" is not a model name


@dataclass(frozen=True, slots=True)
class ListedModel:
    """One model the provider lists: its id as a request names it, and what the list says
    it takes (OpenRouter's `supported_parameters`; None where the list does not say)."""

    id: str
    parameters: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class ModelPage:
    """One page of a list, and the cursor of the next one (None: this was the last)."""

    models: tuple[ListedModel, ...] = ()
    next: str | None = None


class ModelListError(ValueError):
    """A list body that is not in the provider's documented shape."""


class ModelListFailed(Exception):
    """The list could not be had; `error` says why, classified as any provider failure.
    Its text is the failure's kind alone: an SDK's message may quote part of the key."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(error.kind)
        self.error = error


def decode_page(body: bytes, cut: bool) -> Any:
    """The page's JSON; a cut body read as far as it goes (jiter's partial mode)."""
    try:
        return jiter.from_json(body, partial_mode=cut)
    except ValueError as exc:
        raise ModelListError(f"the model list is not JSON ({exc})") from None


def entries(page: Any, field: str, cut: bool, *, required: bool = True) -> list[dict[str, Any]]:
    """The objects listed under `field` of the page; on a cut page the last one is left
    out, since the cut may have gone through it. An absent field is an empty list where
    the provider leaves empty fields out (`required=False`)."""
    if not isinstance(page, dict):
        raise ModelListError("the model list is not a JSON object")
    if field not in page and (cut or not required):
        return []
    listed = page.get(field)
    if not isinstance(listed, list):
        raise ModelListError(f"the model list has no `{field}` list")
    if cut:
        listed = listed[:-1]
    return [entry for entry in listed if isinstance(entry, dict)]


def model_id(value: Any) -> str | None:
    """`value` as a model id: non-empty text of a bounded length without spaces, else None."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    if not value or len(value) > MAX_ID_CHARS or any(ch.isspace() for ch in value):
        return None
    return value


def parameters_of(value: Any) -> frozenset[str] | None:
    """A list of parameter names as a set; None when the list says nothing (no list)."""
    if not isinstance(value, list):
        return None
    return frozenset(name for name in value if isinstance(name, str))


def cursor_of(value: Any) -> str | None:
    """A next-page cursor: non-empty text, else None (no further page)."""
    return value if isinstance(value, str) and value else None
