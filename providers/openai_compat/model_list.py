"""The model list of an OpenAI-style endpoint, read (pure; no SDK).

`GET {base}/models` answers every model at once, in OpenAI's list object:
`{"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}, …]}`
(OpenAI, DeepSeek, Z.ai and the servers that speak the format). OpenRouter's
`GET /api/v1/models` answers `{"data": [...]}` whose entries also carry
`supported_parameters`, the request parameters the model takes (`tools`, `reasoning`,
`temperature`, …), which the bot reads as `RouteHints.listed_parameters`.
"""

from __future__ import annotations

from typing import Any

from providers.model_list import ListedModel, ModelPage, entries, model_id, parameters_of


def page_of(body: Any, cut: bool) -> ModelPage:
    """The models of a decoded list body (`cut`: the body was cut, see `entries`); the
    list has no further page. ModelListError when the body is not a list object."""
    models = []
    for entry in entries(body, "data", cut):
        name = model_id(entry.get("id"))
        if name is not None:
            models.append(ListedModel(name, parameters_of(entry.get("supported_parameters"))))
    return ModelPage(tuple(models))
