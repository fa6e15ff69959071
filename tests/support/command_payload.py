"""The command tree as the bot syncs it to Discord: every command's names, descriptions,
localizations, options, choices, ranges and permissions, in the body of the sync request.

`tests/config/test_command_payload.py` keeps it equal to `tests/fixtures/commands/synced.json`;
after an intended change to a command, write the file again with
`python -m tests.support.command_payload > tests/fixtures/commands/synced.json` (after
compiling the catalogs) and read its diff: it is what Discord will show.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.drive_discord_client import llmbot_factory, running_bot
from tests.support.fake_discord_server import FakeDiscord

ADDED_BY_DISCORD = ("id", "application_id", "version")  # in Discord's answer, not in the bot's request


async def synced_commands(database_dir: Path) -> list[dict[str, Any]]:
    """What the real bot sends when it syncs its global commands, sorted by name."""
    async with FakeDiscord() as fake:
        async with running_bot(fake, llmbot_factory(database_dir)()):
            synced = fake.commands["global"]
    sent = [{key: value for key, value in command.items() if key not in ADDED_BY_DISCORD} for command in synced]
    return sorted(sent, key=lambda command: command["name"])


def as_text(commands: list[dict[str, Any]]) -> str:
    return json.dumps(commands, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        sys.stdout.write(as_text(asyncio.run(synced_commands(Path(workdir)))))


if __name__ == "__main__":
    main()
