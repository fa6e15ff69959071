"""The Gemini API's model list, read (pure; no SDK).

`GET /v1beta/models?pageSize=…&pageToken=…` (`models.list`) answers one page,
`{"models": [Model…], "nextPageToken": "…"}`; an empty field is left out, as in all of
Google's JSON. Each `Model` has its resource `name` (`models/gemini-2.5-flash`), its
`displayName`, token limits and `supportedGenerationMethods`. Only the models whose
methods include `generateContent` can answer a chat (the others embed, count tokens,
make images or speak), and a model is named without the `models/` prefix, as members
type it.
"""

from __future__ import annotations

from typing import Any

from providers.model_list import ListedModel, ModelPage, cursor_of, entries, model_id

PAGE_SIZE = 1000  # the most one page holds (the API's default is 50)
GENERATE_CONTENT = "generateContent"
RESOURCE_PREFIX = "models/"


def _answers_chats(entry: dict[str, Any]) -> bool:
    methods = entry.get("supportedGenerationMethods")
    return isinstance(methods, list) and GENERATE_CONTENT in methods


def page_of(body: Any, cut: bool) -> ModelPage:
    """The chat models of one decoded page and the next page's token (none after a cut
    page). ModelListError when the body is not a page."""
    models = []
    for entry in entries(body, "models", cut, required=False):
        name = entry.get("name")
        if not (isinstance(name, str) and name.startswith(RESOURCE_PREFIX) and _answers_chats(entry)):
            continue
        short = model_id(name[len(RESOURCE_PREFIX):])
        if short is not None:
            models.append(ListedModel(short))
    return ModelPage(tuple(models), None if cut else cursor_of(body.get("nextPageToken")))
