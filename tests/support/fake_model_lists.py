"""Model lists as each provider serves them, for the replay server's `GET` route.

Each class is a `ModelListing` (`fake_provider_server`): it answers its provider's list
path with the documented body, paginated the way the provider paginates, and anything
else with a 404. The shapes follow the SDKs' own types (openai `types/model.py`,
anthropic `types/model_info.py` and its `AsyncPage`, google-genai `Model` /
`ListModelsResponse` in their REST spelling) and OpenRouter's Models API page:

- OpenAI-style (`OpenAIModels`): `GET {base}/models`, every model at once in a list object.
- OpenRouter (`OpenRouterModels`): `GET /api/v1/models`, `{"data": [...]}` whose entries
  carry `supported_parameters`.
- Anthropic (`AnthropicModels`): `GET /v1/models?limit=&after_id=`, newest first, `limit`
  1 to 1000 (default 20; outside, a 400 `invalid_request_error` whose message's wording is
  not a recording), `has_more`, `first_id`, `last_id`.
- Gemini (`GeminiModels`): `GET /v1beta/models?pageSize=&pageToken=`, `pageSize` at most
  1000 (more is served as 1000, default 50), `nextPageToken` while more follow; empty
  fields left out.

A cursor the fake never handed out is the test's own mistake: it is answered with a 500
that says so, not with a guess at the provider's wording.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.fake_provider_server import Reply

CREATED = 1_767_225_600  # 2026-01-01, a Unix time as the lists give it
JSON = "application/json"


def json_reply(body: Any) -> Reply:
    return Reply(body=json.dumps(body).encode(), content_type=JSON)


def no_route(path: str) -> Reply:
    return Reply.error(404, {"error": {"message": f"Not found: {path}"}})


def unknown_cursor(cursor: str) -> Reply:
    return Reply(status=500, body=f"replay server: a cursor it never gave: {cursor!r}".encode(),
                 content_type="text/plain")


@dataclass
class FixedListing:
    """Every list request answered with the same reply (a provider's error, a broken body)."""

    reply: Reply

    def page(self, path: str, query: Mapping[str, str]) -> Reply:
        return self.reply


@dataclass
class OpenAIModels:
    """`GET {base}/models` of OpenAI and the servers that speak its format."""

    ids: Sequence[str]
    path: str = "/v1/models"
    owned_by: str = "openai"

    def page(self, path: str, query: Mapping[str, str]) -> Reply:
        if path != self.path:
            return no_route(path)
        return json_reply({"object": "list", "data": [
            {"id": model, "object": "model", "created": CREATED, "owned_by": self.owned_by} for model in self.ids]})


@dataclass
class OpenRouterModels:
    """`GET /api/v1/models`: `parameters` maps each model id to its `supported_parameters`;
    `description` pads every entry (OpenRouter's are paragraphs) to make a large body."""

    parameters: Mapping[str, Sequence[str]]
    path: str = "/api/v1/models"
    description: str = "A model."

    def entry(self, model: str) -> dict[str, Any]:
        return {
            "id": model, "canonical_slug": model, "name": model.split("/")[-1].title(), "created": CREATED,
            "description": self.description, "context_length": 128_000,
            "architecture": {"modality": "text->text", "input_modalities": ["text"], "output_modalities": ["text"],
                             "tokenizer": "Other", "instruct_type": None},
            "pricing": {"prompt": "0.000001", "completion": "0.000002", "request": "0", "image": "0",
                        "web_search": "0", "internal_reasoning": "0", "input_cache_read": "0",
                        "input_cache_write": "0"},
            "top_provider": {"context_length": 128_000, "max_completion_tokens": 16_384, "is_moderated": False},
            "per_request_limits": None,
            "supported_parameters": list(self.parameters[model]),
            "default_parameters": {"temperature": None, "top_p": None, "frequency_penalty": None},
        }

    def page(self, path: str, query: Mapping[str, str]) -> Reply:
        if path != self.path:
            return no_route(path)
        return json_reply({"data": [self.entry(model) for model in self.parameters]})


@dataclass
class AnthropicModels:
    """`GET /v1/models`, newest first (the order of `ids`); `retired` ids are listed only
    when the request asks for the retired lifecycle, as the API does."""

    ids: Sequence[str]
    retired: frozenset[str] = field(default_factory=frozenset)
    path: str = "/v1/models"

    def entry(self, model: str) -> dict[str, Any]:
        return {"id": model, "type": "model", "display_name": model.replace("-", " ").title(),
                "created_at": "2026-01-01T00:00:00Z", "lifecycle": "retired" if model in self.retired else "active",
                "deprecated_at": None, "retires_at": None, "max_input_tokens": 200_000, "max_tokens": 64_000}

    def page(self, path: str, query: Mapping[str, str]) -> Reply:
        if path != self.path:
            return no_route(path)
        limit = int(query.get("limit", 20))
        if not 1 <= limit <= 1000:
            return Reply.error(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "limit: Input should be between 1 and 1000"}})
        asks_retired = any(name.startswith("lifecycle") and "retired" in value for name, value in query.items())
        shown = [m for m in self.ids if asks_retired or m not in self.retired]
        start = 0
        if "after_id" in query:
            if query["after_id"] not in shown:
                return unknown_cursor(query["after_id"])
            start = shown.index(query["after_id"]) + 1
        data = [self.entry(m) for m in shown[start:start + limit]]
        return json_reply({"data": data, "has_more": start + limit < len(shown),
                           "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None})


@dataclass
class GeminiModels:
    """`GET /v1beta/models`: `methods` maps each model name (without `models/`) to its
    `supportedGenerationMethods`."""

    methods: Mapping[str, Sequence[str]]
    path: str = "/v1beta/models"

    def entry(self, name: str) -> dict[str, Any]:
        return {"name": f"models/{name}", "version": "001", "displayName": name.replace("-", " ").title(),
                "description": "A Gemini model.", "inputTokenLimit": 1_048_576, "outputTokenLimit": 65_536,
                "supportedGenerationMethods": list(self.methods[name]), "temperature": 1, "topP": 0.95,
                "topK": 64, "maxTemperature": 2, "thinking": True}

    def page(self, path: str, query: Mapping[str, str]) -> Reply:
        if path != self.path:
            return no_route(path)
        size = min(int(query.get("pageSize", 50)), 1000)
        names = list(self.methods)
        token = query.get("pageToken")
        start = 0
        if token:
            if not token.startswith("page-") or not token[5:].isdigit():
                return unknown_cursor(token)
            start = int(token[5:])
        body: dict[str, Any] = {}
        if listed := [self.entry(n) for n in names[start:start + size]]:
            body["models"] = listed
        if start + size < len(names):
            body["nextPageToken"] = f"page-{start + size}"
        return json_reply(body)
