"""The link settings (READ_LINKS, LINKS_ALLOW_PRIVATE): their defaults, the words a switch
takes, and a bad value stopping start-up with one line naming the setting, through the
real `python -m bot`."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import SettingsError, load_settings
from tests.setup.test_startup_failures import fernet_key, free_port, operator_lines, run, sqlite_env


def test_links_are_read_and_kept_to_public_addresses_by_default() -> None:
    settings = load_settings(_env_file=None)
    assert (settings.READ_LINKS, settings.LINKS_ALLOW_PRIVATE) == (True, False)


@pytest.mark.parametrize(("value", "expected"), [("false", False), (" OFF ", False), ("0", False),
                                                 ("true", True), ("Yes", True), ("on", True)])
def test_a_switch_takes_the_usual_words(value: str, expected: bool) -> None:
    settings = load_settings(_env_file=None, READ_LINKS=value, LINKS_ALLOW_PRIVATE=value)
    assert (settings.READ_LINKS, settings.LINKS_ALLOW_PRIVATE) == (expected, expected)


def test_links_allow_private_is_apart_from_allow_private_endpoints() -> None:
    settings = load_settings(_env_file=None, ALLOW_PRIVATE_ENDPOINTS="true")
    assert settings.LINKS_ALLOW_PRIVATE is False


@pytest.mark.parametrize(("name", "value"), [("READ_LINKS", "maybe"), ("READ_LINKS", ""),
                                             ("LINKS_ALLOW_PRIVATE", "sometimes"), ("LINKS_ALLOW_PRIVATE", "2")])
def test_a_bad_switch_names_the_setting_and_what_it_takes(name: str, value: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None, **{name: value})
    assert str(caught.value) == f"Invalid setting {name}: use true or false (got {value!r})"


@pytest.mark.parametrize("name", ["READ_LINKS", "LINKS_ALLOW_PRIVATE"])
def test_a_bad_switch_stops_start_up_in_one_line(tmp_path: Path, name: str) -> None:
    env = {**sqlite_env(tmp_path), "BOT_ENCRYPTION_KEY": fernet_key(),
           "DISCORD_API_BASE_URL": f"http://127.0.0.1:{free_port()}/api/v10", name: "perhaps"}
    result = run(tmp_path, env)
    [line] = operator_lines(result)
    assert line == f"Invalid setting {name}: use true or false (got 'perhaps')", line
    assert not (tmp_path / "bot.sqlite3").exists()  # refused before anything was touched
