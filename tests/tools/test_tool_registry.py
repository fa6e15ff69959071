"""Registry and schema: every built-in tool declares a flat JSON object schema."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from bot.tools import Tool, ToolRegistry, default_registry
from bot.tools.schema import tool_parameters


def _walk_keys(node):
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from _walk_keys(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_keys(item)


def test_default_registry_names_and_flat_schemas() -> None:
    registry = default_registry()
    assert registry.names() == ["current_time", "roll_dice", "recent_channel_messages"]
    for spec in registry.specs():
        params = spec.parameters
        assert params["type"] == "object" and isinstance(params["properties"], dict)
        assert spec.description
        keys = set(_walk_keys(params))
        assert not keys & {"$defs", "$ref", "title", "anyOf"}, (spec.name, keys)
        json.dumps(params)  # JSON-serializable as every provider needs
    by_name = {s.name: s.parameters for s in registry.specs()}
    assert by_name["roll_dice"]["required"] == ["notation"]
    assert by_name["roll_dice"]["properties"]["notation"]["type"] == "string"
    count = by_name["recent_channel_messages"]["properties"]["count"]
    assert (count["type"], count["minimum"], count["maximum"]) == ("integer", 1, 20)
    assert "required" not in by_name["current_time"]  # the zone is optional (UTC by default)


class Inner(BaseModel):
    unit: str = Field(description="a unit")


class Outer(BaseModel):
    inner: Inner
    maybe: int | None = None


def test_nested_models_and_optionals_are_inlined() -> None:
    params = tool_parameters(Outer)
    assert params["properties"]["inner"] == {
        "type": "object", "properties": {"unit": {"type": "string", "description": "a unit"}},
        "required": ["unit"]}
    assert params["properties"]["maybe"] == {"type": "integer", "default": None}
    assert params["required"] == ["inner"]


def test_duplicate_tool_names_are_refused() -> None:
    async def run(args, context):
        return 1

    tool = Tool("same", "d", Inner, run)
    with pytest.raises(ValueError, match="duplicate"):
        ToolRegistry([tool, tool])
    assert ToolRegistry([tool]).get("other") is None


def test_adding_offers_a_tool_to_one_answer_without_changing_the_registry() -> None:
    class NoteArgs(BaseModel):
        text: str = Field(..., max_length=10)

    async def note(_args, _context) -> str:
        return "kept"

    base = default_registry()
    added = base.adding(Tool("note", "Keep a note.", NoteArgs, note))
    assert added.names() == [*base.names(), "note"]
    assert [s.name for s in added.specs()] == [*base.names(), "note"]
    assert base.names() == ["current_time", "roll_dice", "recent_channel_messages"]
    assert base.get("note") is None and added.get("note") is not None
    with pytest.raises(ValueError, match="duplicate"):
        added.adding(Tool("roll_dice", "again", NoteArgs, note))
