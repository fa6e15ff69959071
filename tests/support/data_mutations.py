"""Ways to damage an SSE body, for the robustness fuzz (test_robustness.py).

Two styles, both applied to every family: `mutate_event` makes one targeted change to an
event (drop a line, break its JSON, put a wrong-typed value somewhere inside it) and
says whether the JSON was broken; `mutate_lines` makes a few blunt line-level changes
(garbage bytes, stray control lines, halved lines) that need not keep anything parseable.
"""

from __future__ import annotations

import json
import random
from typing import Any

MUTATION_KINDS = ["drop_line", "break_json", "wrong_type"]
JUNK_VALUES: list[Any] = [None, 7, -1.5, "x", "", [], [1, "a"], {}, {"k": None}, True]
WRONG = [None, 5, -1.5, True, "x", "", [], {}, [1, "a"], {"k": None}, "\ud800"]
STRAY_LINES = [b"event: error", b"data: [DONE]", b": ping", b"", b"data: null",
               b'data: {"error": 7}', b'data: {"choices": 3}']


def json_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside a decoded JSON document."""
    paths = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            paths.extend(json_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            paths.extend(json_paths(item, (*prefix, i)))
    return paths


def replace_at(value: Any, path: tuple, new: Any) -> Any:
    """A copy of `value` with the value at `path` replaced by `new`."""
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replace_at(value[path[0]], path[1:], new)
    return copy


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def mutate_event(body: bytes, kind: str, pick: int, junk: int, cut: int) -> tuple[bytes, bool]:
    """One mutation of an SSE body; returns the body and whether a data line's JSON was broken."""
    lines = body.decode().replace("\r\n", "\n").split("\n")
    data_lines = [i for i, line in enumerate(lines) if line.startswith("data: ")]
    if kind == "drop_line":
        del lines[pick % len(lines)]
        return "\n".join(lines).encode(), False
    index = data_lines[pick % len(data_lines)]
    payload = lines[index][6:]
    if kind == "break_json":
        at = cut % len(payload)
        lines[index] = "data: " + payload[:at] + payload[at + 1 + junk % 3:] + ("{" if junk % 2 else "")
        try:
            json.loads(lines[index][6:])
        except ValueError:
            return "\n".join(lines).encode(), True
        return "\n".join(lines).encode(), False
    documents = [i for i in data_lines if _is_json(lines[i][6:])]  # not `[DONE]`
    if not documents:
        return "\n".join(lines).encode(), False
    index = documents[pick % len(documents)]
    document = json.loads(lines[index][6:])
    paths = json_paths(document)
    if paths:
        path = paths[cut % len(paths)]
        document = replace_at(document, path, JUNK_VALUES[junk % len(JUNK_VALUES)])
    lines[index] = "data: " + json.dumps(document)
    return "\n".join(lines).encode(), False


def _wrong_type_somewhere(obj: Any, rng: random.Random) -> Any:
    """Replace one value somewhere in `obj` with a value of a wrong type."""
    node, path = obj, []
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        return rng.choice(WRONG)
    parent, key = path[-1]
    parent[key] = rng.choice(WRONG)
    return obj


def mutate_lines(body: bytes, rng: random.Random, count: int) -> bytes:
    """`count` blunt line-level changes: drop, break, retype, garbage, stray line, halve."""
    lines = body.split(b"\n")
    for _ in range(count):
        i = rng.randrange(len(lines))
        op = rng.randrange(6)
        line = lines[i]
        if op == 0:
            del lines[i]
            if not lines:
                lines = [b""]
        elif op == 1 and line.startswith(b"data: {"):
            lines[i] = line[: rng.randrange(6, len(line))]
        elif op == 2 and line.startswith(b"data: {"):
            try:
                obj = json.loads(line[6:])
            except ValueError:
                continue  # already broken by an earlier change
            lines[i] = b"data: " + json.dumps(_wrong_type_somewhere(obj, rng)).encode()
        elif op == 3:
            lines[i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 12)))
        elif op == 4:
            lines.insert(i, rng.choice(STRAY_LINES))
        else:
            lines[i] = line[: len(line) // 2]
    return b"\n".join(lines)


def transport_pieces(body: bytes, cuts: list[int]) -> list[bytes]:
    """`body` split at `cuts` (taken modulo its length), as a transport might deliver it."""
    pieces, last = [], 0
    for cut in sorted(c % (len(body) + 1) for c in cuts):
        pieces.append(body[last:cut])
        last = cut
    pieces.append(body[last:])
    return pieces
