"""Every number a command takes has its range registered with Discord (so the client
refuses a value out of it before the bot is asked), and the command reference
(docs/commands.md) states the same ranges as the code for `/limits set` and `/model price`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bot.repo.usage import (
    MAX_IMAGES_PER_DAY,
    MAX_MESSAGES_PER_HOUR,
    MAX_PRICE,
    MAX_SEARCHES_PER_DAY,
    MAX_TOKENS_PER_DAY,
)
from tests.support.drive_discord_client import running_bot

COMMANDS = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
NUMBER_TYPES = (4, 10)  # Discord's INTEGER and NUMBER option types


def number_options(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """(command path and option name, the option) for every number option under `node`."""
    for option in node.get("options") or []:
        if option["type"] in (1, 2):
            yield from number_options(option, f"{path} {option['name']}".strip())
        elif option["type"] in NUMBER_TYPES:
            yield f"{path} {option['name']}".strip(), option


def reference_row(command: str) -> str:
    return next(line for line in COMMANDS.read_text().splitlines() if line.startswith(f"| `{command}`"))


async def test_every_number_option_has_its_range_registered(fake_discord, bot_factory):
    async with running_bot(fake_discord, bot_factory()):
        synced = list(fake_discord.commands["global"])
    options = {f"{root['name']} {path}": option for root in synced for path, option in number_options(root)}
    assert len(options) >= 10, sorted(options)  # the walk found the commands' numbers
    unbounded = sorted(name for name, option in options.items()
                       if option.get("min_value") is None or option.get("max_value") is None)
    assert unbounded == []
    limits = {name.split()[-1]: option["max_value"] for name, option in options.items()
              if name.startswith("limits set ")}
    assert limits == {"messages_per_hour": MAX_MESSAGES_PER_HOUR, "tokens_per_day": MAX_TOKENS_PER_DAY,
                      "server_tokens_per_day": MAX_TOKENS_PER_DAY, "searches_per_day": MAX_SEARCHES_PER_DAY,
                      "images_per_day": MAX_IMAGES_PER_DAY}
    assert {option["max_value"] for name, option in options.items() if name.startswith("model price ")} == {MAX_PRICE}


def test_the_command_reference_states_the_registered_ranges():
    limits = reference_row("/limits set")
    stated = dict(re.findall(r"`(\w+)`[^`]*? 0–([\d,]+)", limits))
    for option in ("messages_per_hour", "searches_per_day", "server_tokens_per_day", "images_per_day"):
        assert option in stated, limits
    assert int(stated["messages_per_hour"].replace(",", "")) == MAX_MESSAGES_PER_HOUR
    assert int(stated["searches_per_day"].replace(",", "")) == MAX_SEARCHES_PER_DAY
    assert int(stated["server_tokens_per_day"].replace(",", "")) == MAX_TOKENS_PER_DAY
    assert int(stated["images_per_day"].replace(",", "")) == MAX_IMAGES_PER_DAY
    assert f"each 0–{int(MAX_PRICE):,}" in reference_row("/model price")
