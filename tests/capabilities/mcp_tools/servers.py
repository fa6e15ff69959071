"""The tests' MCP servers file: the tiny stdio server (`tiny_server.py`) run by this
Python, its notes written to a file the test reads."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def servers_file(folder: Path, *, name: str = "tiny") -> tuple[Path, Path]:
    """(the MCP_SERVERS file, the notes file the write tool appends to)."""
    notes = folder / "notes.txt"
    python_path = os.pathsep.join(p for p in sys.path if p)
    entry = {"command": sys.executable, "args": ["-m", "tests.capabilities.mcp_tools.tiny_server"],
             "env": {"PYTHONPATH": python_path, "NOTES_FILE": str(notes)}}
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {name: entry}}), encoding="utf-8")
    return path, notes
