"""Cost per byte of the pure text guards at 64 KiB and 1 MiB (target ratio <= 1.5).

Run from the repository root: `python bench/guards.py`. Text is fed as 1-character
deltas (the worst case for per-call overhead and for any rescanning of held text);
truncated tool arguments go through the repair in one call. The script only reports;
its figures go to bench/results.json under `guards.<guard>.*`.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import Figures, Timing, best, key_part, time_call, verdict  # noqa: E402

from providers.text.json_repair import try_repair_incomplete_json  # noqa: E402
from providers.text.spill_guard import ReasoningContentSpillGuard  # noqa: E402
from providers.text.think_stripper import ThinkBlockContentStripper  # noqa: E402
from providers.text.verbatim_tool_calls import VerbatimToolCallParser  # noqa: E402
from providers.types import ToolSpec  # noqa: E402

SMALL = 64 * 1024
LARGE = 1024 * 1024
TARGET_RATIO = 1.5

TOOLS = [
    ToolSpec(
        "search",
        "",
        {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    ),
    ToolSpec(
        "generate_image",
        "",
        {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    ),
    "now",
]

_WORDS = (
    "the model said that it would look into this and report back with a short answer "
    "about values like 3.14 and 2.5 percent while the user waited for the result"
).split()
_PIECES = [
    lambda r: " ".join(r.choice(_WORDS) for _ in range(r.randint(5, 25))) + ". ",
    lambda r: "<think>" + " ".join(r.choice(_WORDS) for _ in range(r.randint(5, 30))) + "</think>",
    lambda r: "<mm:think>plan: step 1 < step 2</mm:think>\n",
    lambda r: 'Let me check. `search({"q": "' + r.choice(_WORDS) + '"})` ',
    lambda r: "I could use search (it finds pages) or generate_image later. ",
    lambda r: '```json\ngenerate_image({"prompt": "a cat (orange)"})\n```\n',
    lambda r: "Compare a < b and c <b> bold</b> with `code.Method` here.\n",
    lambda r: "now() is a tool; research(x) is not. ",
]


def mixed_text(size: int, seed: int = 7) -> str:
    """Deterministic prose, think blocks and tool-call-looking text of about `size` chars."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        piece = rng.choice(_PIECES)(rng)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


def truncated_arguments(size: int, seed: int = 11) -> str:
    """A tool-argument JSON object of about `size` bytes, cut inside a string value."""
    rng = random.Random(seed)
    obj: dict[str, object] = {}
    text = ""
    index = 0
    while len(text) < size + 64:
        for _ in range(64):
            obj[f"key_{index}"] = rng.choice(
                [
                    " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12))),
                    rng.randint(-(10**6), 10**6),
                    rng.random(),
                    [rng.randint(0, 99) for _ in range(rng.randint(0, 6))],
                    {"nested": "va\\lue \"quoted\" \u00e9", "ok": True, "n": None},
                ]
            )
            index += 1
        text = json.dumps(obj)
    cut = text.rfind(': "', 0, size)
    return text[: cut + 8]


def run_stripper(text: str) -> None:
    guard = ThinkBlockContentStripper()
    for ch in text:
        guard.feed(ch)
    guard.flush()


def run_spill_guard(text: str) -> None:
    guard = ReasoningContentSpillGuard()
    guard.observe_reasoning("thinking")
    # Start lowercase without a boundary so the guard holds, then keeps judging.
    for ch in "so the answer is" + text:
        guard.feed(ch)
    guard.flush()


def run_verbatim(text: str) -> None:
    parser = VerbatimToolCallParser(TOOLS)
    for ch in text:
        parser.feed(ch)
    parser.flush()


def run_repair(raw: str) -> None:
    if try_repair_incomplete_json(raw) is None:
        raise SystemExit("bench input was refused by the repair")


def best_costs(fn: Callable[[str], None], small: str, large: str, rounds: int) -> tuple[float, float]:
    """Best cost per byte of each size, in CPU time of this process.

    CPU time rather than wall time, and rounds interleaving both sizes, so that load from
    other processes on this shared machine distorts the two sizes alike.
    """
    small_runs: list[Timing] = []
    large_runs: list[Timing] = []
    for _ in range(rounds):
        small_runs.extend(time_call(fn, small) for _ in range(3))
        large_runs.append(time_call(fn, large))
    return best(small_runs).cpu / len(small), best(large_runs).cpu / len(large)


def main() -> int:
    small_text, large_text = mixed_text(SMALL), mixed_text(LARGE)
    small_json, large_json = truncated_arguments(SMALL), truncated_arguments(LARGE)
    rows = [
        ("think stripper (1-char deltas)", run_stripper, small_text, large_text),
        ("spill guard, armed (1-char deltas)", run_spill_guard, small_text, large_text),
        ("verbatim parser (1-char deltas)", run_verbatim, small_text, large_text),
        ("json repair (one call)", run_repair, small_json, large_json),
    ]
    figures = Figures("guards")
    print(f"{'guard':38} {'ns/B 64KiB':>11} {'ns/B 1MiB':>10} {'ratio':>6}  target<={TARGET_RATIO}")
    all_ok = True
    for name, fn, small, large in rows:
        small_cost, large_cost = best_costs(fn, small, large, rounds=3)
        key = key_part(name.split(" (")[0])
        figures.add(f"{key}.ns_per_byte_64k", small_cost * 1e9)
        figures.add(f"{key}.ns_per_byte_1m", large_cost * 1e9)
        # The floor of a linearity check is the same guard's cost per byte at 64 KiB.
        ratio = figures.add_ratio(key, large_cost, small_cost)
        all_ok &= ratio <= TARGET_RATIO
        print(
            f"{name:38} {small_cost * 1e9:11.1f} {large_cost * 1e9:10.1f} {ratio:6.2f}  "
            f"{verdict(ratio, TARGET_RATIO)}"
        )
    print("all guards meet the target ratio" if all_ok else "some guard misses the target ratio")
    print(f"figures merged into {figures.write()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
