"""The export file: a header, then one section of rows per `MemberData`, at most
`bound` bytes of UTF-8 JSON.

Pure: no I/O. The file is written line by line (one row a line, so a reader can page
through it and its size is known row by row): a section keeps its rows, oldest first,
while they fit; the first row that does not fit cuts that section (its newer rows are
left out) and the header says how many rows of which sections were left out. A later,
smaller section still goes in whole when it fits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.capabilities.member_data import Exported

BOUND = 1024 * 1024  # 1 MiB: Discord takes far larger files; a member's reader does not
HEADER_ROOM = 8 * 1024  # the header and the sections' brackets, kept free of rows


@dataclass(frozen=True)
class ExportFile:
    """The file's bytes and the rows left out of each cut section."""

    data: bytes
    left_out: dict[str, int]

    @property
    def cut(self) -> bool:
        return bool(self.left_out)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False, default=str)


def _fitting(sections: Sequence[tuple[str, Exported]], room: int) -> tuple[list[tuple[str, list[str]]], dict[str, int]]:
    """Each section's row lines that fit in `room` bytes, and how many rows each left out."""
    kept: list[tuple[str, list[str]]] = []
    left_out: dict[str, int] = {}
    for name, rows in sections:
        lines: list[str] = []
        for row in rows:
            line = "  " + _dump(row)
            size = len(line.encode("utf-8")) + 2  # its comma and newline
            if size > room:
                left_out[name] = len(rows) - len(lines)
                break
            lines.append(line)
            room -= size
        kept.append((name, lines))
    return kept, left_out


def export_file(header: dict[str, Any], sections: Sequence[tuple[str, Exported]], bound: int = BOUND) -> ExportFile:
    """The file (see the module docstring); `header` gains `left_out` when a section was cut."""
    kept, left_out = _fitting(sections, bound - HEADER_ROOM)
    head = {**header, "left_out": left_out} if left_out else header
    out = ["{", f' "header": {_dump(head)}' + ("," if kept else "")]
    for number, (name, lines) in enumerate(kept, 1):
        out.append(f" {_dump(name)}: [")
        if lines:
            out.append(",\n".join(lines))
        out.append(" ]" + ("," if number < len(kept) else ""))
    out.append("}")
    data = ("\n".join(out) + "\n").encode("utf-8")
    if len(data) > bound:  # only a header or section names beyond HEADER_ROOM could: a bug
        raise ValueError(f"export file of {len(data)} bytes over its bound of {bound}")
    return ExportFile(data, left_out)
