"""Per-server settings, declared once by the capability they belong to.

Declaring a setting: a capability's `settings.py` holds one `SettingsDeclaration` naming
its settings, each a `Setting` with its name, type (bool, int or float), default, bounds
and who may change it (Manage Server). Everything else reads the declaration: storage
(one JSON object per server and capability, `bot.repo.capability_settings`, validated on
every read: a value unknown or out of bounds reads as its default, logged once), the
server's configuration (`ServerConfig.settings`), and a `/settings <name>` subcommand
with its option, bounds, reply and `/status` line (`bot.cogs.declared_settings`). Its
texts are locale keys derived from the name: `commands.settings.<name>.name` and
`.description`; the option's `commands.param.<option>.name` and `.description`; the
replies `commands.reply.<name>_on` and `_off` (a number: `commands.reply.<name>_set` with
`{value}`); the status lines `commands.status.<name>_on` and `_off` (a number:
`commands.status.<name>` with `{value}`); for a number out of bounds
`commands.error.<name>_out_of_range` (`{low}`, `{limit}`). A setting that is an optional
option of another's subcommand (`part_of`) has no subcommand of its own. A reply or
status line that says more (a warning, the operator's override) is a hook on the
setting. A new switch is one `Setting` and its locale keys: no migration, no repository
module, no command code. Counters and lists (usage, listen channels, keys) stay tables.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from sqlalchemy.ext.asyncio import AsyncSession

from bot.settings import Settings
from providers.model_capabilities import ModelCapabilities

log = logging.getLogger(__name__)

Value = bool | int | float
Kind = type[bool] | type[int] | type[float]
Values = Mapping[str, Value]  # one capability's settings, by name
Said = tuple[str, dict[str, Any]]  # a catalog key and its parameters


@dataclass(frozen=True)
class Place:
    """What a reply or status hook may look at beyond its capability's values."""

    session: AsyncSession
    guild_id: int | None
    operator: Settings
    capabilities: Callable[[Any], ModelCapabilities]  # a ModelTarget -> what its model takes


Hook = Callable[[Values, Place], Awaitable[list[Said]]]


@dataclass(frozen=True)
class Text:
    """A parameter of a line that is itself a catalog text (shown in the member's language)."""

    key: str


async def no_line(values: Values, place: Place) -> list[Said]:
    """The status hook of a setting its capability shows in another line."""
    return []


class OutOfBounds(ValueError):
    """A value the setting does not take: the command refuses it before storing anything."""

    def __init__(self, setting: Setting, value: object) -> None:
        super().__init__(f"{setting.name} out of bounds: {value!r}")
        self.setting = setting


@dataclass(frozen=True)
class Setting:
    """One per-server setting (see the module docstring for what derives from it)."""

    name: str
    kind: Kind
    default: Value
    low: float | None = None
    high: float | None = None
    option: str = "enabled"  # the subcommand's option (its locale keys: commands.param.<option>.*)
    part_of: str | None = None  # an optional option of that setting's subcommand, not one of its own
    changed_by: Literal["manage_guild"] = "manage_guild"  # the permission a change needs
    reply: Hook | None = None
    status: Hook | None = None

    def __post_init__(self) -> None:
        if self.kind is not bool and (self.low is None or self.high is None):
            raise TypeError(f"setting {self.name}: a number needs both bounds")
        if not self.accepts(self.default):
            raise TypeError(f"setting {self.name}: its default {self.default!r} is not a value it takes")

    def accepts(self, value: object) -> bool:
        """Of the setting's type (an int serves a float) and within its bounds."""
        if self.kind is bool or isinstance(value, bool):
            return self.kind is bool and isinstance(value, bool)
        if not isinstance(value, int | float) or (self.kind is int and not isinstance(value, int)):
            return False
        assert self.low is not None and self.high is not None  # __post_init__ said so
        return math.isfinite(value) and self.low <= value <= self.high

    def checked(self, value: object) -> Value:
        """The value as stored; OutOfBounds when the setting does not take it."""
        if not self.accepts(value):
            raise OutOfBounds(self, value)
        return float(value) if self.kind is float else value  # type: ignore[arg-type]

    def shown(self, value: float | None) -> int | str:
        """A bound or value as a reply shows it: 10, 2.5, not 10.0."""
        return int(value) if self.kind is int else f"{value:g}"  # type: ignore[arg-type]

    @property
    def refusal(self) -> Said:
        """The localized refusal of a value out of bounds."""
        return f"commands.error.{self.name}_out_of_range", {"low": self.shown(self.low), "limit": self.shown(self.high)}

    def said(self, place: Literal["reply", "status"], value: Value) -> Said:
        """The derived reply or status line for `value` (a setting without a hook)."""
        if self.kind is bool:
            return f"commands.{place}.{self.name}_{'on' if value else 'off'}", {}
        return (f"commands.reply.{self.name}_set" if place == "reply" else f"commands.status.{self.name}",
                {"value": self.shown(value)})  # type: ignore[arg-type]

    def keys(self) -> set[str]:
        """The locale keys derived from this setting (those its hooks replace excluded)."""
        found = {f"commands.param.{self.option}.name", f"commands.param.{self.option}.description"}
        if self.kind is not bool:
            found.add(self.refusal[0])
        if self.part_of is not None:
            return found
        found |= {f"commands.settings.{self.name}.name", f"commands.settings.{self.name}.description"}
        for place, hook in (("reply", self.reply), ("status", self.status)):
            if hook is None:
                found |= {self.said(place, v)[0] for v in ((True, False) if self.kind is bool else (self.default,))}
        return found


@dataclass(frozen=True)
class SettingsDeclaration:
    """A capability's per-server settings, in the order /settings and /status show them."""

    capability: str
    settings: tuple[Setting, ...]

    def __post_init__(self) -> None:
        names = [s.name for s in self.settings]
        if len(set(names)) != len(names):
            raise TypeError(f"{self.capability}: a setting declared twice")
        for setting in self.settings:
            if setting.part_of is not None and self.setting(setting.part_of).part_of is not None:
                raise TypeError(f"{self.capability}.{setting.name}: part of a setting without a subcommand")

    def setting(self, name: str) -> Setting:
        return next(s for s in self.settings if s.name == name)

    def defaults(self) -> dict[str, Value]:
        return {s.name: s.default for s in self.settings}

    def read(self, stored: Mapping[str, object] | None) -> Values:
        """The stored values checked against the declaration: one missing, unknown or out of
        bounds reads as its default (logged once per setting and process)."""
        values = self.defaults()
        for name, value in (stored or {}).items():
            setting = next((s for s in self.settings if s.name == name), None)
            if setting is not None and setting.accepts(value):
                values[name] = setting.checked(value)
            else:
                _log_once(self.capability, name, value)
        return MappingProxyType(values)


_LOGGED: set[tuple[str, str]] = set()


def _log_once(capability: str, name: str, value: object) -> None:
    if (capability, name) not in _LOGGED:
        _LOGGED.add((capability, name))
        log.warning("stored setting %s.%s=%r is not declared or out of bounds: its default applies",
                    capability, name, value)


@dataclass(frozen=True)
class ServerValues:
    """Every declared setting of one server, checked (defaults where nothing is stored)."""

    by_capability: Mapping[str, Values]

    def value(self, capability: str, name: str) -> Value:
        return self.by_capability[capability][name]


def server_values(declarations: Iterable[SettingsDeclaration],
                  stored: Mapping[str, Mapping[str, object]] | None = None) -> ServerValues:
    """The server's values from what is stored per capability (nothing: every default)."""
    stored = stored or {}
    return ServerValues(MappingProxyType({d.capability: d.read(stored.get(d.capability))
                                          for d in declarations}))
