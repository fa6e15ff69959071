"""docs/settings.md is what `python -m bot.settings_reference` writes from the `Settings`
class now: a new setting, a changed default or bound, or a setting without a description
fails here until the page is generated again (`make settings-doc`)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.settings import Settings
from bot.settings_reference import DESCRIPTIONS, MissingDescription, load_groups, reference

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "settings.md"


def rows() -> dict[str, list[str]]:
    """The reference's table rows by setting: its cells (type, default, bounds)."""
    found = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `([A-Z][A-Z0-9_]+)` \|(.*)\|$", line)
        if match:
            found[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return found


def test_the_committed_page_is_what_the_generator_writes_now() -> None:
    assert PAGE.read_text(encoding="utf-8") == reference(), "run `make settings-doc` and commit docs/settings.md"


def test_the_module_writes_the_page_when_run() -> None:
    """The command the page's header names, as an operator or CI runs it."""
    run = subprocess.run([sys.executable, "-m", "bot.settings_reference"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == PAGE.read_text(encoding="utf-8")


def test_every_setting_has_a_row_and_nothing_else_does() -> None:
    assert set(rows()) == set(Settings.model_fields)


def test_the_rows_carry_the_class_defaults_and_bounds() -> None:
    table = rows()
    assert table["MAX_CONCURRENT_ANSWERS"] == ["integer", "`500`", "≥ 1, ≤ 5,000"]
    assert table["DEFAULT_MESSAGES_PER_HOUR"] == ["integer", "`30`", "≥ 0, ≤ 1,000,000"]
    assert table["ALLOWED_SERVERS"] == ["comma-separated integers", "unset", "at most 1,000 items"]
    assert table["READER_WAIT_SECONDS"] == ["number", "`10.0`", "≥ 0.1, ≤ 300"]
    assert table["CUSTOM_API"][:2] == ["one of `chat_completions`, `responses`", "`chat_completions`"]
    assert table["ALLOW_DMS"][1] == "`true`"
    assert table["METRICS_HOST"][2] == "at least 1 character(s)"


def test_a_setting_without_a_description_stops_the_generator(tmp_path: Path) -> None:
    text = DESCRIPTIONS.read_text(encoding="utf-8")
    without = tmp_path / "descriptions.toml"
    without.write_text(text.replace('"READER_WAIT_SECONDS"', '"NOT_A_SETTING"'), encoding="utf-8")
    with pytest.raises(MissingDescription, match="READER_WAIT_SECONDS.*NOT_A_SETTING"):
        load_groups(without)
    assert len(load_groups()) > 10  # the real file passes
