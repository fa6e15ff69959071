"""The operator's voice settings: a transcription route that lacks its model, address or
keys, or names an unknown provider, stops the real `python -m bot` in one line naming the
setting, before anything is touched; a complete route loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import SettingsError, load_settings
from tests.setup.test_startup_failures import fernet_key, free_port, operator_lines, run, sqlite_env


@pytest.mark.parametrize(("env", "named"), [
    ({"DEFAULT_TRANSCRIBE_PROVIDER": "openai", "DEFAULT_TRANSCRIBE_MODEL": "whisper-1"},
     "DEFAULT_TRANSCRIBE_API_KEYS"),
    ({"DEFAULT_TRANSCRIBE_PROVIDER": "custom", "DEFAULT_TRANSCRIBE_MODEL": "whisper-1"},
     "DEFAULT_TRANSCRIBE_BASE_URL"),
    ({"DEFAULT_TRANSCRIBE_PROVIDER": "openai", "DEFAULT_TRANSCRIBE_API_KEYS": "sk-x"}, "DEFAULT_TRANSCRIBE_MODEL"),
    ({"DEFAULT_TRANSCRIBE_PROVIDER": "whisperx"}, "DEFAULT_TRANSCRIBE_PROVIDER"),
])
def test_an_incomplete_transcription_route_stops_start_up_in_one_line(
        tmp_path: Path, env: dict[str, str], named: str) -> None:
    base = {**sqlite_env(tmp_path), "BOT_ENCRYPTION_KEY": fernet_key(),
            "DISCORD_API_BASE_URL": f"http://127.0.0.1:{free_port()}/api/v10"}
    result = run(tmp_path, {**base, **env})
    [line] = operator_lines(result)
    assert line.startswith(f"Invalid setting {named}:"), line
    assert "sk-x" not in result.stderr + result.stdout
    assert not (tmp_path / "bot.sqlite3").exists()


@pytest.mark.parametrize(("env", "named"), [
    ({"DEFAULT_TRANSCRIBE_MODEL": "whisper-1"}, "DEFAULT_TRANSCRIBE_MODEL"),
    ({"DEFAULT_TRANSCRIBE_PROVIDER": "custom", "DEFAULT_TRANSCRIBE_MODEL": "w",
      "DEFAULT_TRANSCRIBE_BASE_URL": "ftp://whisper:9000"}, "DEFAULT_TRANSCRIBE_BASE_URL"),
    ({"VOICE_MAX_SECONDS": "0"}, "VOICE_MAX_SECONDS"),
    ({"VOICE_MAX_SECONDS": "1201"}, "VOICE_MAX_SECONDS"),
])
def test_other_voice_mistakes_name_their_setting(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=f"^Invalid setting {named}:"):
        load_settings(**env)


def test_a_keyless_local_server_and_a_keyed_openai_route_load() -> None:
    local = load_settings(DEFAULT_TRANSCRIBE_PROVIDER="Custom", DEFAULT_TRANSCRIBE_MODEL="whisper-1",
                          DEFAULT_TRANSCRIBE_BASE_URL="http://127.0.0.1:8000/v1/")
    assert (local.DEFAULT_TRANSCRIBE_PROVIDER, local.DEFAULT_TRANSCRIBE_BASE_URL) == ("custom", "http://127.0.0.1:8000/v1")
    assert local.transcribe_keys() == []
    remote = load_settings(DEFAULT_TRANSCRIBE_PROVIDER="openai", DEFAULT_TRANSCRIBE_MODEL="whisper-1",
                           DEFAULT_TRANSCRIBE_API_KEYS="sk-a, sk-b")
    assert remote.transcribe_keys() == ["sk-a", "sk-b"] and "sk-a" not in repr(remote)
