"""An idle bot carries no provider SDK and no document or page reader.

The SDKs (openai, anthropic, google-genai) are imported by `providers.adapter.create_adapter`
when a request is made, the readers (pypdf, python-docx, openpyxl, trafilatura) with the
first file or page they read: together they were most of an idle bot's 215 MiB
(bench/idle_memory.py measures the real process). Importing everything `python -m bot`
loads at start-up, every cog and the capability rules included, must load none of them.
"""

from __future__ import annotations

import subprocess
import sys

LAZY = ("openai", "anthropic", "google.genai", "pypdf", "docx", "lxml", "openpyxl", "trafilatura",
        "mcp", "jsonschema")  # the MCP SDK and its validator: with the first MCP server connected

START_UP = """
import importlib, pkgutil, sys
import bot.__main__, bot.app, bot.cogs
for module in pkgutil.iter_modules(bot.cogs.__path__):
    importlib.import_module(f"bot.cogs.{module.name}")
from providers.capabilities import capabilities_of
for provider in ("google", "anthropic", "openai", "openrouter", "deepseek", "zai", "custom"):
    capabilities_of(provider, "some-model")
lazy = LAZY_NAMES
print(" ".join(sorted(name for name in sys.modules if any(name == top or name.startswith(top + ".")
                                                          for top in lazy))))
"""


def test_start_up_imports_no_sdk_and_no_reader():
    script = START_UP.replace("LAZY_NAMES", repr(LAZY))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [], f"imported at start-up: {out.stdout.split()[:10]}"
