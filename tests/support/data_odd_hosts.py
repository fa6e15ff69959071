"""IPv4 addresses written with other Unicode digits and full stops, which yarl (under aiohttp)
maps back to the plain address before connecting: a check reading the host as written
takes them for names."""

from __future__ import annotations

_FULLWIDTH = {str(d): chr(0xFF10 + d) for d in range(10)}
_CIRCLED = {"0": "\u24ea", **{str(d): chr(0x2460 + d - 1) for d in range(1, 10)}}  # ⓪ ①..⑨

IDEOGRAPHIC_STOP = "\u3002"  # 。
FULLWIDTH_STOP = "\uff0e"  # ．
HALFWIDTH_STOP = "\uff61"  # ｡


def _digits(address: str, table: dict[str, str]) -> str:
    return "".join(table.get(ch, ch) for ch in address)


def _one_odd_digit(address: str) -> str:
    """Only the first digit written fullwidth (`1２7.0.0.1` style, one character differs)."""
    index = next(i for i, ch in enumerate(address) if ch.isdigit())
    return address[:index] + _FULLWIDTH[address[index]] + address[index + 1:]


def _mixed(address: str) -> str:
    """Fullwidth and circled digits and three kinds of full stop in one host."""
    stops = iter([IDEOGRAPHIC_STOP, FULLWIDTH_STOP, HALFWIDTH_STOP])
    out = []
    for i, ch in enumerate(address):
        if ch == ".":
            out.append(next(stops))
        else:
            out.append((_FULLWIDTH if i % 2 else _CIRCLED)[ch])
    return "".join(out)


SPELLINGS = {
    "fullwidth digits": lambda a: _digits(a, _FULLWIDTH),
    "fullwidth digits and stops": lambda a: _digits(a, _FULLWIDTH).replace(".", FULLWIDTH_STOP),
    "ideographic stops": lambda a: a.replace(".", IDEOGRAPHIC_STOP),
    "halfwidth ideographic stops": lambda a: a.replace(".", HALFWIDTH_STOP),
    "circled digits": lambda a: _digits(a, _CIRCLED),
    "one odd digit": _one_odd_digit,
    "mixed": _mixed,
}


def spellings(address: str) -> list[tuple[str, str]]:
    """(name, host) for every odd spelling of `address`, for pytest ids."""
    return [(name, spell(address)) for name, spell in SPELLINGS.items()]
