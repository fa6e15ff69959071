"""The Makefile's install steps, run by real `make` on a tiny copy of the project: a failed
install is not marked done (the next run repeats it and recovers), and an unsupported
Python stops with one line naming the version needed."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")
needs_make = pytest.mark.skipif(MAKE is None, reason="no `make` on PATH")

TINY_PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "tiny-bot"
version = "0"
requires-python = ">=3.11"

[tool.setuptools.packages.find]
include = ["bot*", "providers*", "stream*"]
"""


def tiny_project(tmp_path: Path) -> Path:
    """The real Makefile beside three empty packages: installing needs only setuptools."""
    project = tmp_path / "project"
    for package in ("bot", "providers", "stream"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text("")
    shutil.copy(ROOT / "Makefile", project / "Makefile")
    (project / "pyproject.toml").write_text(TINY_PYPROJECT)
    return project


def make(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`make` as an operator runs it: not nested in the `make test` that runs this suite
    (a nested make names itself `make[1]` and inherits the outer one's flags)."""
    outer = {"MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"}
    base = {k: v for k, v in os.environ.items() if k not in outer}
    return subprocess.run([MAKE, "--no-print-directory", *args], cwd=project, capture_output=True,  # type: ignore[list-item]
                          text=True, env={**base, **(env or {})}, timeout=300)


# No package index at all: pip's config files and find-links are dropped (os.devnull as
# the config file tells pip to read none), so building the tiny package cannot fetch setuptools.
NO_INDEX = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "",
            "PIP_EXTRA_INDEX_URL": "", "PIP_CONSTRAINT": ""}


@needs_make
def test_a_failed_install_is_not_marked_done_and_the_next_run_recovers(tmp_path: Path) -> None:
    project = tiny_project(tmp_path)
    python = f"PYTHON={sys.executable}"

    failed = make(project, "install", python, env=NO_INDEX)
    assert failed.returncode != 0, failed.stdout + failed.stderr
    assert not (project / ".venv" / ".installed").exists(), "a failed install was marked done"

    recovered = make(project, "install", python)  # the machine's package index is back
    assert recovered.returncode == 0, recovered.stdout + recovered.stderr
    assert (project / ".venv" / ".installed").exists()
    imported = subprocess.run([str(project / ".venv" / "bin" / "python"), "-I", "-c", "import bot, providers, stream"],
                              cwd=tmp_path, capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr  # installed for real, not only importable from the project


def older_python() -> str | None:
    """A Python older than 3.11 on this machine, if there is one."""
    candidates = [shutil.which(f"python3.{minor}") for minor in (10, 9, 8)]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[0]*/bin/python3")))
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.[6-9].*/bin/python3")))
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import sys; sys.exit(sys.version_info >= (3, 11))"],
                               capture_output=True)
        if probe.returncode == 0:
            return candidate
    return None


OLD_PYTHON = older_python()


@needs_make
@pytest.mark.skipif(OLD_PYTHON is None, reason="no Python older than 3.11 on this machine")
def test_an_unsupported_python_stops_with_one_line_naming_the_version(tmp_path: Path) -> None:
    project = tiny_project(tmp_path)
    result = make(project, "install", f"PYTHON={OLD_PYTHON}")
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if not line.startswith("make: ***")]
    assert len(errors) == 1, result.stderr
    assert "3.11" in errors[0] and "PYTHON=" in errors[0]
    assert not (project / ".venv").exists()  # nothing half-made for the next run to trip on


@needs_make
def test_a_venv_from_an_older_python_is_replaced(tmp_path: Path) -> None:
    """A .venv left by a run with an unsupported Python does not need `make clean`."""
    if OLD_PYTHON is None:
        pytest.skip("no Python older than 3.11 on this machine")
    project = tiny_project(tmp_path)
    subprocess.run([OLD_PYTHON, "-m", "venv", str(project / ".venv")], check=True)
    (project / ".venv" / ".installed").touch()  # what the old Makefile left after a failed install
    result = make(project, "install", f"PYTHON={sys.executable}")
    assert result.returncode == 0, result.stdout + result.stderr
    version = subprocess.run([str(project / ".venv" / "bin" / "python"), "-c",
                              "import sys; print(sys.version_info >= (3, 11))"], capture_output=True, text=True)
    assert version.stdout.strip() == "True"
    imported = subprocess.run([str(project / ".venv" / "bin" / "python"), "-I", "-c", "import bot"],
                              cwd=tmp_path, capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr  # the new venv was installed into too


def test_the_readme_names_make_clean() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make clean" in readme
