"""The search settings (SEARCH_BACKEND, SEARCH_URL, SEARCH_API_KEY, SEARCH_ALLOW_PRIVATE):
a missing or contradictory combination stops start-up with one line naming the setting,
through the real `python -m bot`; the key is a secret that no line or repr shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import SettingsError, load_settings
from tests.setup.test_startup_failures import fernet_key, free_port, operator_lines, run, sqlite_env

KEY = "sk-search-key-never-shown-7731"


@pytest.mark.parametrize(("env", "named", "says"), [
    ({"SEARCH_BACKEND": "searxng"}, "SEARCH_URL", "needs the SearXNG instance's address"),
    ({"SEARCH_BACKEND": "brave"}, "SEARCH_API_KEY", "needs the service's API key"),
    ({"SEARCH_BACKEND": "bing", "SEARCH_API_KEY": KEY}, "SEARCH_BACKEND", "'searxng', 'brave' or 'tavily'"),
    ({"SEARCH_BACKEND": "searxng", "SEARCH_URL": "http://127.0.0.1:8888"}, "SEARCH_URL", "SEARCH_ALLOW_PRIVATE"),
])
def test_a_bad_search_setting_stops_start_up_in_one_line(tmp_path: Path, env: dict[str, str], named: str,
                                                         says: str) -> None:
    base = {**sqlite_env(tmp_path), "BOT_ENCRYPTION_KEY": fernet_key(),
            "DISCORD_API_BASE_URL": f"http://127.0.0.1:{free_port()}/api/v10"}
    result = run(tmp_path, {**base, **env})
    [line] = operator_lines(result)
    assert line.startswith(f"Invalid setting {named}:") and says in line, line
    assert KEY not in result.stdout + result.stderr
    assert not (tmp_path / "bot.sqlite3").exists()  # refused before anything was touched


def one_line(**env: str) -> str:
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None, **env)
    return str(caught.value)


@pytest.mark.parametrize(("env", "expected"), [
    ({"SEARCH_BACKEND": "tavily", "SEARCH_API_KEY": "  "}, "Invalid setting SEARCH_API_KEY: SEARCH_BACKEND=tavily"),
    ({"SEARCH_URL": "https://search.example.org"}, "Invalid setting SEARCH_URL: set SEARCH_BACKEND"),
    ({"SEARCH_API_KEY": KEY}, "Invalid setting SEARCH_API_KEY: set SEARCH_BACKEND"),
    ({"SEARCH_BACKEND": "searxng", "SEARCH_URL": "searxng:8080"}, "Invalid setting SEARCH_URL: must start with http"),
    ({"SEARCH_BACKEND": "searxng", "SEARCH_URL": "http://user:pw@searxng:8080"},
     "Invalid setting SEARCH_URL: must not contain a user name"),
    ({"SEARCH_BACKEND": "searxng", "SEARCH_URL": "http://169.254.169.254", "ALLOW_PRIVATE_ENDPOINTS": "true"},
     "Invalid setting SEARCH_URL: 169.254.169.254 is a cloud metadata address"),
    ({"SEARCH_BACKEND": "searxng", "SEARCH_URL": "http://metadata.google.internal", "SEARCH_ALLOW_PRIVATE": "true"},
     "Invalid setting SEARCH_URL: metadata.google.internal is a cloud metadata service"),
    ({"SEARCH_BACKEND": "searxng", "SEARCH_URL": "http://10.0.0.5:8080"},
     "Invalid setting SEARCH_URL: 10.0.0.5 is a private address"),
    # the host as the client connects to it: yarl maps these to 127.0.0.1 and 169.254.169.254
    ({"SEARCH_BACKEND": "searxng", "SEARCH_URL": "http://１２７。0。0。①:8080"},
     "Invalid setting SEARCH_URL: 127.0.0.1 is a loopback address"),
    ({"SEARCH_BACKEND": "searxng", "SEARCH_URL": "http://169｡254．169．254", "SEARCH_ALLOW_PRIVATE": "true"},
     "Invalid setting SEARCH_URL: 169.254.169.254 is a cloud metadata address"),
])
def test_contradictions_name_the_setting(env: dict[str, str], expected: str) -> None:
    line = one_line(**env)
    assert line.startswith(expected), line
    assert KEY not in line


@pytest.mark.parametrize("env", [
    {},
    {"SEARCH_BACKEND": ""},
    {"SEARCH_BACKEND": "SearXNG", "SEARCH_URL": "http://searxng:8080/"},  # a name: checked when connecting
    {"SEARCH_BACKEND": "searxng", "SEARCH_URL": "http://127.0.0.1:8080", "SEARCH_ALLOW_PRIVATE": "true"},
    {"SEARCH_BACKEND": "searxng", "SEARCH_URL": "http://[::1]:8080", "ALLOW_PRIVATE_ENDPOINTS": "true"},
    {"SEARCH_BACKEND": "brave", "SEARCH_API_KEY": KEY},
    {"SEARCH_BACKEND": "tavily", "SEARCH_API_KEY": KEY, "SEARCH_URL": "https://tavily-proxy.example.org"},
])
def test_good_combinations_are_accepted(env: dict[str, str]) -> None:
    settings = load_settings(_env_file=None, **env)
    assert KEY not in repr(settings)
    if env.get("SEARCH_BACKEND"):
        assert settings.SEARCH_BACKEND == env["SEARCH_BACKEND"].lower()
    if settings.SEARCH_URL is not None:
        assert not settings.SEARCH_URL.endswith("/")
