"""The pure parts: tool names every provider takes, the servers file's rules, arguments
held to a server's schema, results framed and bounded."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from bot.capabilities.mcp_tools.arguments import arguments_for, usable_schema
from bot.capabilities.mcp_tools.framing import MAX_RESULT, framed_result
from bot.capabilities.mcp_tools.names import MAX_NAME, tool_name
from bot.capabilities.mcp_tools.servers_file import MAX_SERVERS, ServersFileError, parse_servers
from bot.tools.schema import flat_schema

# OpenAI's and Anthropic's characters, Gemini's first character, the shortest bound (64).
EVERY_PROVIDER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
server_names = st.from_regex(r"\A[A-Za-z][A-Za-z0-9_-]{0,23}\Z")


@settings(deadline=None)  # a shared CI core can stall one example; the property is what counts
@given(server_names, st.text(max_size=200))
def test_every_tool_name_is_one_every_provider_takes(server: str, tool: str) -> None:
    name = tool_name(server, tool)
    assert EVERY_PROVIDER.match(name) and len(name) <= MAX_NAME
    assert name.startswith(f"{server}__")


@settings(deadline=None)
@given(server_names, st.text(max_size=200), st.text(max_size=200))
def test_two_tools_of_a_server_never_share_a_name(server: str, one: str, other: str) -> None:
    if one != other:
        assert tool_name(server, one) != tool_name(server, other)


def test_a_plain_name_is_kept_as_it_is() -> None:
    assert tool_name("notes", "write_note") == "notes__write_note"
    assert tool_name("notes", "search.files") != "notes__search_files"  # changed: it carries a hash


def test_both_transports_read() -> None:
    stdio, http = parse_servers(json.dumps({"mcpServers": {
        "notes": {"command": "python", "args": ["-m", "notes"], "env": {"DIR": "/srv"}},
        "wiki": {"type": "streamable-http", "url": "https://mcp.example.com/mcp", "headers": {"A": "b"}}}}))
    assert (stdio.transport, stdio.command, stdio.args, dict(stdio.env)) == ("stdio", "python", ("-m", "notes"),
                                                                          {"DIR": "/srv"})
    assert (http.transport, http.url, dict(http.headers)) == ("http", "https://mcp.example.com/mcp", {"A": "b"})


@pytest.mark.parametrize(("document", "problem"), [
    ({}, 'expected an object with "mcpServers"'),
    ({"mcpServers": {"1st": {"command": "x"}}}, "server name '1st' must start with a letter"),
    ({"mcpServers": {"a.b": {"command": "x"}}}, "server name 'a.b'"),
    ({"mcpServers": {"a": {"type": "sse", "url": "https://x"}}}, "the older sse transport is not supported"),
    ({"mcpServers": {"a": {"command": ""}}}, 'a stdio server needs "command"'),
    ({"mcpServers": {"a": {"command": "x", "args": "-v"}}}, '"args" must be a list of strings'),
    ({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}, '"env" must map names to strings'),
    ({"mcpServers": {"a": {"url": "file:///etc/passwd"}}}, 'needs "url" starting with http:// or https://'),
    ({"mcpServers": {"a": {"url": "https://x", "command": "y", "type": "http"}}}, "unknown field 'command'"),
    ({"mcpServers": {f"s{i}": {"command": "x"} for i in range(MAX_SERVERS + 1)}}, f"at most {MAX_SERVERS}"),
])
def test_a_mistake_is_one_line_saying_what(document: dict, problem: str) -> None:
    with pytest.raises(ServersFileError) as raised:
        parse_servers(json.dumps(document))
    assert problem in str(raised.value) and "\n" not in str(raised.value)


def test_arguments_are_held_to_the_servers_schema() -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
              "required": ["text"], "additionalProperties": False}
    checked = arguments_for(schema)
    assert checked.model_validate({"text": "hi", "times": 2}).values == {"text": "hi", "times": 2}
    with pytest.raises(ValidationError) as raised:
        checked.model_validate({"times": "2", "extra": True})
    message = str(raised.value)
    assert "'text' is a required property" in message and "times: '2' is not of type 'integer'" in message
    assert "Additional properties are not allowed" in message


def test_a_schema_that_is_not_an_object_schema_is_left_out() -> None:
    assert usable_schema({"type": "object", "properties": {}})
    assert not usable_schema({"type": "string"})
    assert not usable_schema({"type": "object", "properties": {"a": {"type": 5}}})
    assert not usable_schema(None)


def test_a_servers_schema_is_flattened_for_the_providers() -> None:
    raw = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "args", "type": "object",
           "$defs": {"Where": {"title": "Where", "type": "string"}},
           "properties": {"where": {"$ref": "#/$defs/Where"}}}
    assert flat_schema(raw) == {"type": "object", "properties": {"where": {"type": "string"}}}


def test_results_are_framed_as_untrusted_and_bounded() -> None:
    long = SimpleNamespace(type="text", text="x" * (MAX_RESULT + 50))
    image = SimpleNamespace(type="image", data="...")
    framed = framed_result("wiki", "read", SimpleNamespace(content=[long, image], structured_content=None,
                                                         is_error=True))
    assert len(framed["untrusted_data"]) == MAX_RESULT and "cut" in framed["cut"]
    assert framed["tool_reported_error"] is True
    assert "untrusted data" in framed["note"] and "wiki" in framed["note"]
    structured = framed_result("wiki", "count", SimpleNamespace(content=[], structured_content={"n": 3},
                                                               is_error=False))
    assert structured["untrusted_data"] == '{"n": 3}' and "cut" not in structured
