"""Shards from a process index (SHARD_PROCESSES, PROCESS_INDEX or the host name's ordinal)
and DATABASE_PGBOUNCER: the derived SHARD_IDS, and every contradiction refused in one line
naming the setting, through `load_settings` and the real `python -m bot`."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import SettingsError, load_settings
from tests.setup.test_startup_failures import fernet_key, free_port, operator_lines, run, sqlite_env


@pytest.fixture(autouse=True)
def host(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A host name without an ordinal unless a test sets one (this machine's could end in one)."""
    monkeypatch.setenv("HOSTNAME", "laptop")
    return monkeypatch


@pytest.mark.parametrize(("processes", "index", "expected"), [
    ("3", "0", [0, 3, 6]), ("3", "1", [1, 4, 7]), ("3", "2", [2, 5]), ("1", "0", list(range(8))),
])
def test_shard_ids_follow_the_process_index(processes: str, index: str, expected: list[int]) -> None:
    settings = load_settings(_env_file=None, SHARD_COUNT="8", SHARD_PROCESSES=processes, PROCESS_INDEX=index)
    assert settings.SHARD_IDS == expected


@pytest.mark.parametrize(("hostname", "index"), [("bot-2", 2), ("bot-0", 0), ("llm-bot-1.bot.default.svc", 1)])
def test_without_an_index_the_host_names_ordinal_gives_it(host: pytest.MonkeyPatch, hostname: str,
                                                          index: int) -> None:
    host.setenv("HOSTNAME", hostname)
    settings = load_settings(_env_file=None, SHARD_COUNT="6", SHARD_PROCESSES="3")
    assert settings.PROCESS_INDEX == index
    assert settings.SHARD_IDS == [index, index + 3]


def test_shard_ids_that_agree_with_the_index_are_kept() -> None:
    settings = load_settings(_env_file=None, SHARD_COUNT="4", SHARD_PROCESSES="2", PROCESS_INDEX="1",
                             SHARD_IDS="3,1")
    assert settings.SHARD_IDS == [1, 3]


def test_without_processes_nothing_is_derived() -> None:
    settings = load_settings(_env_file=None, SHARD_COUNT="4", SHARD_IDS="2,3", SHARD_PROCESSES=" ", PROCESS_INDEX="")
    assert (settings.SHARD_IDS, settings.SHARD_PROCESSES, settings.PROCESS_INDEX) == ([2, 3], None, None)
    assert load_settings(_env_file=None).DATABASE_PGBOUNCER is False


REFUSALS = [
    ({"SHARD_PROCESSES": "2"}, "SHARD_PROCESSES", "needs SHARD_COUNT"),
    ({"SHARD_COUNT": "2", "SHARD_PROCESSES": "3"}, "SHARD_PROCESSES", "without a shard"),
    ({"SHARD_COUNT": "4", "PROCESS_INDEX": "1"}, "PROCESS_INDEX", "needs SHARD_PROCESSES"),
    ({"SHARD_COUNT": "4", "SHARD_PROCESSES": "2", "PROCESS_INDEX": "2"}, "PROCESS_INDEX",
     "2 is out of range with SHARD_PROCESSES=2 (0 to 1)"),
    ({"SHARD_COUNT": "4", "SHARD_PROCESSES": "2", "HOSTNAME": "bot-5"}, "PROCESS_INDEX",
     "5 (from the host name 'bot-5') is out of range"),
    ({"SHARD_COUNT": "4", "SHARD_PROCESSES": "2"}, "PROCESS_INDEX", "the host name 'laptop' ends in no ordinal"),
    ({"SHARD_COUNT": "4", "SHARD_PROCESSES": "2", "PROCESS_INDEX": "1", "SHARD_IDS": "0,2"}, "SHARD_IDS",
     "0,2 contradicts SHARD_PROCESSES=2 with PROCESS_INDEX=1 (shards 1,3)"),
    ({"DATABASE_PGBOUNCER": "maybe"}, "DATABASE_PGBOUNCER", "use true or false"),
]


@pytest.mark.parametrize(("env", "named", "says"), REFUSALS)
def test_a_contradiction_is_one_line_naming_the_setting(host: pytest.MonkeyPatch, env: dict[str, str],
                                                        named: str, says: str) -> None:
    if "HOSTNAME" in env:
        host.setenv("HOSTNAME", env["HOSTNAME"])
    settings = {name: value for name, value in env.items() if name != "HOSTNAME"}
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None, **settings)
    line = str(caught.value)
    assert line.startswith(f"Invalid setting {named}: ") and says in line and "\n" not in line, line


@pytest.mark.parametrize(("env", "named", "says"), [
    *REFUSALS,
    ({"DATABASE_PGBOUNCER": "true"}, "DATABASE_PGBOUNCER", "not a postgresql+asyncpg:// URL"),
    ({"DISCORD_REST_PROXY": "true", "DISCORD_API_BASE_URL": ""}, "DISCORD_REST_PROXY", "set DISCORD_API_BASE_URL"),
])
def test_python_m_bot_stops_on_it_in_one_line(tmp_path: Path, env: dict[str, str], named: str, says: str) -> None:
    # Were the settings accepted, the bot would go on to this closed port and fail differently.
    base = {**sqlite_env(tmp_path), "BOT_ENCRYPTION_KEY": fernet_key(), "HOSTNAME": "laptop",
            "DISCORD_API_BASE_URL": f"http://127.0.0.1:{free_port()}/api/v10"}
    [line] = operator_lines(run(tmp_path, {**base, **env}))
    assert line.startswith(f"Invalid setting {named}: ") and says in line, line
    assert not (tmp_path / "bot.sqlite3").exists()  # refused before anything was touched
