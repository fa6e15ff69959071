"""Anthropic's model list, read (pure; no SDK).

`GET /v1/models?limit=…&after_id=…` answers one page, newest models first:
`{"data": [ModelInfo…], "has_more": bool, "first_id", "last_id"}`, each `ModelInfo`
with its `id`, `display_name`, `created_at`, `type: "model"` and `lifecycle` (active,
deprecated or retired). The next page starts after `last_id` while `has_more`. A
retired model answers no request, so it is not offered (the API lists it only when
asked, but a list that holds one anyway does not make it usable).
"""

from __future__ import annotations

from typing import Any

from providers.model_list import ListedModel, ModelPage, cursor_of, entries, model_id

PAGE_SIZE = 1000  # the most one page holds (the API's default is 20)
RETIRED = "retired"


def page_of(body: Any, cut: bool) -> ModelPage:
    """The models of one decoded page and the cursor of the next (none after a cut
    page). ModelListError when the body is not a page."""
    models = []
    for entry in entries(body, "data", cut):
        name = model_id(entry.get("id"))
        if name is not None and entry.get("lifecycle") != RETIRED:
            models.append(ListedModel(name))
    more = not cut and body.get("has_more") is True
    return ModelPage(tuple(models), cursor_of(body.get("last_id")) if more else None)
