"""A server's tools as each provider family's request carries them: the names within
what each provider documents, the server's schema flattened (no `$ref`, `$defs`,
`title` or `$schema`), built by the families' own request builders.

Documented rules (the SDKs' own docstrings, in the project's virtualenv): OpenAI's
`FunctionDefinition.name` "a-z, A-Z, 0-9, or contain underscores and dashes, with a
maximum length of 64"; Gemini's `FunctionDeclaration.name` "Must start with a letter or
an underscore ... underscores, dots, colons and dashes, with a maximum length of 128";
Anthropic's tool name `^[a-zA-Z0-9_-]{1,128}$`."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

from bot.capabilities.mcp_tools.hub import Offered
from bot.capabilities.mcp_tools.link import usable_tools
from bot.capabilities.mcp_tools.servers_file import ServerSpec
from bot.capabilities.mcp_tools.tool import server_tool
from providers.anthropic_native.request import build_arguments
from providers.capabilities import capabilities_of
from providers.gemini.request import build_body
from providers.types import ChatRequest, Message

OPENAI = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
GEMINI = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$")
ANTHROPIC = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "args", "type": "object",
          "$defs": {"Page": {"title": "Page", "type": "object", "properties": {"id": {"type": "integer"}}}},
          "properties": {"page": {"$ref": "#/$defs/Page"}}, "required": ["page"]}
NAMES = ["read_page", "wiki.edit/page", "ページを読む", "x" * 120]


def specs() -> list:
    listed = [SimpleNamespace(name=name, description="d", input_schema=SCHEMA, annotations=None) for name in NAMES]
    link = SimpleNamespace(spec=ServerSpec("wiki-main", url="https://mcp.example/mcp"))
    return [server_tool(Offered(link, tool), "en").spec() for tool in usable_tools("wiki-main", listed)]  # type: ignore[arg-type]


def test_every_family_carries_names_it_takes_and_flat_schemas() -> None:
    request = ChatRequest(messages=[Message("user", "hi")], tools=specs())
    gemini = build_body(request, capabilities_of("google", "gemini-2.5-flash"))
    anthropic = build_arguments(request, capabilities_of("anthropic", "claude-sonnet-4-5"))
    gemini_names = [d["name"] for d in gemini["tools"][0]["functionDeclarations"]]
    anthropic_names = [tool["name"] for tool in anthropic["tools"]]
    assert len(set(gemini_names)) == len(NAMES) and gemini_names == anthropic_names
    for name in gemini_names:
        assert OPENAI.match(name) and GEMINI.match(name) and ANTHROPIC.match(name), name
    for schema in [d["parametersJsonSchema"] for d in gemini["tools"][0]["functionDeclarations"]] + \
            [tool["input_schema"] for tool in anthropic["tools"]]:
        text = json.dumps(schema)
        assert "$ref" not in text and "$defs" not in text and '"title"' not in text and "$schema" not in text
        assert schema["properties"]["page"] == {"type": "object", "properties": {"id": {"type": "integer"}}}
