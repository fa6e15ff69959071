"""Discord's limits have one definition each; every other module imports them.

The stream layer defines the limits it needs itself (it cannot import the bot) and
`bot.edge.limits` re-exports those. A module-level `..._LIMIT` name bound to one of
Discord's numbers anywhere else is a second definition that can drift.
"""

from __future__ import annotations

import ast
from pathlib import Path

import bot.edge.limits as limits
import stream.splitter
import stream.thought_log

ROOT = Path(__file__).resolve().parents[2]
DEFINED_IN = {"bot/edge/limits.py", "stream/splitter.py", "stream/thought_log.py"}
# Small counts (10 embeds per message) are too common a number to mean Discord.
DISCORD_VALUES = {getattr(limits, name) for name in limits.__all__} - set(range(25))


def second_definitions(root: Path) -> list[str]:
    found = []
    for package in ("bot", "stream"):
        for path in sorted((root / package).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            if where in DEFINED_IN:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=where)
            for node in tree.body:
                if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Constant):
                    continue
                names = [t.id for t in node.targets if isinstance(t, ast.Name) and "LIMIT" in t.id]
                if names and type(node.value.value) is int and node.value.value in DISCORD_VALUES:
                    found.append(f"{where}:{node.lineno} {names[0]} = {node.value.value}")
    return found


def test_no_module_defines_a_discord_limit_of_its_own():
    assert second_definitions(ROOT) == []


def test_the_checker_sees_a_second_definition(tmp_path):
    (tmp_path / "bot").mkdir()
    (tmp_path / "stream").mkdir()
    (tmp_path / "bot" / "m.py").write_text(
        '"""EMBED_TITLE_LIMIT = 256 in prose is fine."""\n'
        "TITLE_LIMIT = 256\nMAX_OUTPUT_TOKENS = 4096\nODD_LIMIT = 257\n")
    (tmp_path / "stream" / "n.py").write_text("DESCRIPTION_LIMIT = 4096\n")
    assert second_definitions(tmp_path) == ["bot/m.py:2 TITLE_LIMIT = 256", "stream/n.py:1 DESCRIPTION_LIMIT = 4096"]


def test_the_bot_reexports_the_stream_layers_definitions():
    assert limits.MESSAGE_LIMIT is stream.splitter.DISCORD_MESSAGE_LIMIT
    assert limits.EMBED_DESCRIPTION_LIMIT is stream.thought_log.EMBED_DESCRIPTION_LIMIT
    assert limits.EMBED_TOTAL_LIMIT is stream.thought_log.EMBED_TOTAL_LIMIT
    assert (limits.MESSAGE_LIMIT, limits.EMBED_DESCRIPTION_LIMIT, limits.EMBED_TOTAL_LIMIT) == (2000, 4096, 6000)
