"""A malformed MCP_SERVERS file stops `python -m bot` (the real process) in one line
naming the setting, the file and the problem; the file's secrets are not in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.setup.test_startup_failures import fernet_key, operator_lines, run


@pytest.mark.parametrize(("body", "problem"), [
    ('{"mcpServers": {"notes": {"command": "x", "env": {"TOKEN": "s3cret-env"}, "cwd": 5}}}',
     'server notes: "cwd" must be a string'),
    ('{"mcpServers": {"wiki": {"url": "https://mcp.example", "headers": {"Authorization": "s3cret-h"}, "x": 1}}}',
     "server wiki: unknown field 'x'"),
    ('{"mcpServers": [', "not JSON (line 1, column 17"),
])
def test_a_malformed_servers_file_is_one_line(tmp_path: Path, body: str, problem: str) -> None:
    servers = tmp_path / "mcp.json"
    servers.write_text(body, encoding="utf-8")
    result = run(tmp_path, {"DISCORD_TOKEN": "x", "BOT_ENCRYPTION_KEY": fernet_key(),
                            "MCP_SERVERS": str(servers)})
    [line] = operator_lines(result)
    assert line.startswith(f"Invalid setting MCP_SERVERS: {servers}: ") and problem in line
    assert "s3cret" not in result.stderr + result.stdout
