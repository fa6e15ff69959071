"""`settle_heap` (called by `python -m bot` once start-up is done): start-up garbage is
collected, not frozen for good; what is alive leaves the collector's sight; young
collections come less often. `return_large_blocks` is called by `python -m bot` before
start-up and by no import. Run in child processes: freezing this one would keep every
later test's cycles forever."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.load.heap import M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import gc, json, weakref
from bot.load.heap import YOUNG_THRESHOLD, settle_heap

class Node:
    pass

garbage = Node(); garbage.me = garbage  # a cycle only the collector can free
gone = weakref.ref(garbage)
del garbage
kept = Node(); kept.me = kept
gc.disable()  # so nothing but settle_heap collects here
settle_heap()
print(json.dumps({"garbage_freed": gone() is None, "frozen": gc.get_freeze_count(),
                  "young": gc.get_threshold()[0], "expected_young": YOUNG_THRESHOLD,
                  "kept_tracked": any(o is kept for o in gc.get_objects())}))
"""


def test_start_up_garbage_is_collected_and_the_rest_frozen():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True).stdout
    seen = json.loads(out)
    assert seen["garbage_freed"]
    assert seen["frozen"] > 1000  # modules, classes, functions: all of start-up
    assert not seen["kept_tracked"]  # frozen objects are no longer walked by collections
    assert seen["young"] == seen["expected_young"]


# glibc's mallopt, recorded instead of called: every product module is imported (no call
# may happen), then `python -m bot`'s main() runs up to the event loop (one call).
ALLOCATOR_CHILD = """
import ctypes, importlib, json, os, pkgutil, sys

calls = []
REAL_CDLL = ctypes.CDLL

class RecordingLibrary(REAL_CDLL):
    def __getattr__(self, name):
        if name == "mallopt":
            def mallopt(option, value):
                calls.append([option, value])
                return 1
            return mallopt
        return super().__getattr__(name)

ctypes.CDLL = RecordingLibrary
for top in ("providers", "stream", "bot"):
    package = importlib.import_module(top)
    for module in pkgutil.walk_packages(package.__path__, top + "."):
        importlib.import_module(module.name)
on_import = list(calls)

import bot.__main__ as entry

def no_loop(settings, coroutine):
    coroutine.close()

entry.run_on_loop = no_loop
sys.argv = ["bot"]
status = entry.main()
print(json.dumps({"on_import": on_import, "at_start": calls[len(on_import):], "status": status}))
"""


def test_the_allocator_is_tuned_by_start_up_not_by_an_import(tmp_path):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
           "DISCORD_TOKEN": "token", "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}"}
    out = subprocess.run([sys.executable, "-c", ALLOCATOR_CHILD], capture_output=True, text=True,
                         check=True, cwd=tmp_path, env=env).stdout
    seen = json.loads(out.splitlines()[-1])
    assert seen["on_import"] == []
    assert seen["at_start"] == [[M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES]]
    assert seen["status"] == 0
