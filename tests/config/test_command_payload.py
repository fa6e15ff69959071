"""The command tree Discord receives stays what it was: every name, description,
localization, option, choice, range and permission of the sync request equals
`tests/fixtures/commands/synced.json` (written by `python -m tests.support.command_payload`;
its docstring says when and how to write it again)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.command_payload import as_text, synced_commands

KEPT = Path(__file__).resolve().parents[1] / "fixtures" / "commands" / "synced.json"


async def test_the_synced_command_tree_is_the_one_kept(tmp_path: Path) -> None:
    synced = await synced_commands(tmp_path)
    kept = json.loads(KEPT.read_text())
    assert [c["name"] for c in synced] == [c["name"] for c in kept]
    for command, expected in zip(synced, kept, strict=True):
        assert command == expected, command["name"]
    assert as_text(synced) == KEPT.read_text()
