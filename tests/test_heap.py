"""`settle_heap` (called by `python -m bot` once start-up is done): start-up garbage is
collected, not frozen for good; what is alive leaves the collector's sight; young
collections come less often. Run in a child process: freezing this one would keep every
later test's cycles forever."""

from __future__ import annotations

import json
import subprocess
import sys

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
