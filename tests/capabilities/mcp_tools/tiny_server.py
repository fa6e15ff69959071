"""A small stdio MCP server for the tests, written with the SDK's server API: `lookup`
(read-only), `environment_names` (read-only: what the server was started with), `write_note` (not read-only: it appends to the file NOTES_FILE names, so a
test sees whether it ran), `crash` (the process exits at once) and `hang` (the whole server stops answering).
Run as `python -m tests.capabilities.mcp_tools.tiny_server` (stdio), or with `http PORT`
for streamable HTTP on 127.0.0.1:PORT/mcp, answering only requests whose Authorization
header is `Bearer $MCP_TOKEN` (401 otherwise)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("tiny")


@server.tool(description="Look a word up in the tiny dictionary.", annotations=ToolAnnotations(readOnlyHint=True))
def lookup(word: str) -> str:
    return f"{word}: a small test word"


@server.tool(description="Write a note to the shared notes file.", annotations=ToolAnnotations(readOnlyHint=False))
def write_note(text: str, times: int = 1) -> str:
    with Path(os.environ["NOTES_FILE"]).open("a", encoding="utf-8") as notes:
        notes.write(f"{text}\n" * times)
    return "written"


@server.tool(description="The names of this server's environment variables.",
             annotations=ToolAnnotations(readOnlyHint=True))
def environment_names() -> str:
    return " ".join(sorted(os.environ))


@server.tool(description="Stop the server process at once.", annotations=ToolAnnotations(readOnlyHint=True))
def crash() -> str:
    os._exit(3)


@server.tool(description="Never answer.", annotations=ToolAnnotations(readOnlyHint=True))
async def hang() -> str:
    time.sleep(3600)  # blocks the server's event loop: it answers nothing more, pings included
    return "never"


def token_required(app, token: str):
    """The ASGI app, answering 401 to an HTTP request without the expected bearer token."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)
    return guarded


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        import uvicorn

        app = token_required(server.streamable_http_app(), os.environ["MCP_TOKEN"])
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run()
