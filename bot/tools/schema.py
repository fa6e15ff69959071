"""JSON schemas every provider accepts, from pydantic argument models.

Pydantic emits `$defs`/`$ref`, `title` on every node and `anyOf [X, null]` for optional
fields; Gemini rejects `$ref` and some OpenAI-compatible servers choke on the rest. The
flattened schema inlines references, drops titles and keeps the non-null branch.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

DROPPED = frozenset({"title", "$defs", "definitions"})


def tool_parameters(model: type[BaseModel]) -> dict[str, Any]:
    """The flattened JSON schema of `model`, always an object schema."""
    return flat_schema(model.model_json_schema())


def flat_schema(raw: dict[str, Any]) -> dict[str, Any]:
    """`raw` (any JSON object schema: pydantic's, an MCP server's) flattened the same way."""
    flat = _flatten({k: v for k, v in raw.items() if k != "$schema"}, raw.get("$defs", raw.get("definitions", {})))
    flat.setdefault("type", "object")
    flat.setdefault("properties", {})
    return flat


def _flatten(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_flatten(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _flatten(merged, defs)
    options = node.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(kept) == 1:
            rest = {k: v for k, v in node.items() if k != "anyOf"}
            return _flatten({**kept[0], **rest}, defs)
    return {key: _flatten(value, defs) for key, value in node.items() if key not in DROPPED}
