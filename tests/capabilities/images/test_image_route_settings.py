"""The operator's image route: a partly set one stops `python -m bot` in one line naming
the setting (through the real process), and each setting's own mistakes are one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.capabilities.images.environment import image_route_problem
from bot.settings import SettingsError, load_settings
from tests.setup.test_startup_failures import fernet_key, free_port, operator_lines, run, sqlite_env


@pytest.mark.parametrize(("env", "named"), [
    ({"DEFAULT_IMAGE_PROVIDER": "openai", "DEFAULT_IMAGE_MODEL": "gpt-image-1"}, "DEFAULT_IMAGE_API_KEYS"),
    ({"DEFAULT_IMAGE_MODEL": "gpt-image-1"}, "DEFAULT_IMAGE_PROVIDER"),
    ({"DEFAULT_IMAGE_PROVIDER": "openai", "DEFAULT_IMAGE_API_KEYS": "sk-x"}, "DEFAULT_IMAGE_MODEL"),
    ({"DEFAULT_IMAGE_PROVIDER": "custom", "DEFAULT_IMAGE_MODEL": "local"}, "DEFAULT_IMAGE_BASE_URL"),
    ({"DEFAULT_IMAGE_PROVIDER": "google", "DEFAULT_IMAGE_MODEL": "gemini-2.5-flash-image"},
     "DEFAULT_IMAGE_API_KEYS"),
    ({"DEFAULT_IMAGE_PROVIDER": "midjourney"}, "DEFAULT_IMAGE_PROVIDER"),
])
def test_a_partly_set_image_route_stops_start_up_in_one_line(tmp_path: Path, env: dict[str, str],
                                                             named: str) -> None:
    base = {**sqlite_env(tmp_path), "BOT_ENCRYPTION_KEY": fernet_key(),
            "DISCORD_API_BASE_URL": f"http://127.0.0.1:{free_port()}/api/v10"}
    [line] = operator_lines(run(tmp_path, {**base, **env}))
    assert line.startswith(f"Invalid setting {named}:"), line
    assert not (tmp_path / "bot.sqlite3").exists()


def test_the_settings_read_like_the_text_route() -> None:
    settings = load_settings(_env_file=None, DEFAULT_IMAGE_PROVIDER=" OpenAI ", DEFAULT_IMAGE_MODEL="gpt-image-1",
                             DEFAULT_IMAGE_API_KEYS="sk-a-0001, sk-b-0002,", DEFAULT_IMAGE_BASE_URL="",
                             IMAGES_PER_DAY="3")
    assert (settings.DEFAULT_IMAGE_PROVIDER, settings.DEFAULT_IMAGE_BASE_URL, settings.IMAGES_PER_DAY) == (
        "openai", None, 3)
    assert settings.default_image_api_keys() == ["sk-a-0001", "sk-b-0002"]
    assert "sk-a-0001" not in repr(settings)
    assert image_route_problem(settings) is None
    assert image_route_problem(load_settings(_env_file=None)) is None  # no route at all: fine
    keyless = load_settings(_env_file=None, DEFAULT_IMAGE_PROVIDER="custom", DEFAULT_IMAGE_MODEL="flux",
                            DEFAULT_IMAGE_BASE_URL="http://10.0.0.5:8000/v1/")
    assert image_route_problem(keyless) is None and keyless.DEFAULT_IMAGE_BASE_URL == "http://10.0.0.5:8000/v1"
    for bad, line in [({"DEFAULT_IMAGE_BASE_URL": "ftp://x"}, "Invalid setting DEFAULT_IMAGE_BASE_URL: must start "
                                                                 "with http:// or https://"),
                      ({"IMAGES_PER_DAY": "-1"}, "Invalid setting IMAGES_PER_DAY: ")]:
        with pytest.raises(SettingsError) as refused:
            load_settings(_env_file=None, **bad)
        assert str(refused.value).startswith(line)
