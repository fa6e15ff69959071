"""Dice notation ("2d6+1", "d20", "4d8-2"): parsing is pure, rolling takes the RNG."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

MAX_DICE = 100
MAX_SIDES = 1000
MAX_MODIFIER = 10_000
_NOTATION = re.compile(r"^\s*(\d*)\s*[dD]\s*(\d+)\s*(?:([+-])\s*(\d+))?\s*$")


@dataclass(frozen=True)
class DiceSpec:
    count: int
    sides: int
    modifier: int


def parse_notation(notation: str) -> DiceSpec:
    """`NdS[+-M]`; raises ValueError with a readable reason when out of bounds."""
    match = _NOTATION.match(notation)
    if match is None:
        raise ValueError(f"not dice notation: {notation!r} (expected e.g. '2d6+1')")
    count = int(match.group(1) or 1)
    sides = int(match.group(2))
    modifier = int(match.group(4) or 0) * (-1 if match.group(3) == "-" else 1)
    if not 1 <= count <= MAX_DICE:
        raise ValueError(f"dice count must be between 1 and {MAX_DICE}")
    if not 2 <= sides <= MAX_SIDES:
        raise ValueError(f"sides must be between 2 and {MAX_SIDES}")
    if abs(modifier) > MAX_MODIFIER:
        raise ValueError(f"modifier must be within ±{MAX_MODIFIER}")
    return DiceSpec(count, sides, modifier)


def roll(spec: DiceSpec, rng: random.Random) -> dict[str, object]:
    """Each die and the total, as the model will read them."""
    rolls = [rng.randint(1, spec.sides) for _ in range(spec.count)]
    return {"rolls": rolls, "modifier": spec.modifier, "total": sum(rolls) + spec.modifier}
