"""`/settings` subcommands and `/status` lines made from the capabilities' settings
declarations (`bot.capabilities.declared`), so a declared setting needs no command code.

Each setting that is not an option of another's subcommand (`part_of`) becomes one
subcommand: its option typed and bounded as declared (Discord's client keeps a number in
range; any other client's value is refused here with the setting's refusal, nothing
stored), its reply and its status line derived from its name or said by its hooks.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any, Literal, Optional

import discord
from discord import app_commands
from sqlalchemy.ext.asyncio import AsyncSession

from bot.capabilities.declared import Place, Said, Setting, SettingsDeclaration, Text, Value, Values
from bot.cogs.base import ConfigCog, reply, send, text
from bot.edge.translator import lstr, named
from bot.repo.capability_settings import read_values, set_values

Parameter = inspect.Parameter


def place(cog: ConfigCog, session: AsyncSession, guild_id: int | None) -> Place:
    """What a setting's hooks may look at, from the cog's bot."""
    return Place(session, guild_id, cog.bot.settings, cog.bot.access.capabilities)


def add_declared(group: app_commands.Group, declarations: Iterable[SettingsDeclaration]) -> None:
    """One subcommand per declared setting with a subcommand of its own, in declared order."""
    for declaration in declarations:
        for setting in declaration.settings:
            if setting.part_of is None:
                group.add_command(subcommand(declaration, setting))


def subcommand(declaration: SettingsDeclaration, setting: Setting) -> app_commands.Command:
    """`/settings <name>`: the setting's option (required) and those of the settings that
    are part of it (optional: left out, their stored value is kept)."""
    if setting.changed_by != "manage_guild":
        raise TypeError(f"{setting.name}: /settings holds Manage Server settings only")
    options = [setting, *(s for s in declaration.settings if s.part_of == setting.name)]

    async def callback(cog: ConfigCog, interaction: discord.Interaction, **given: Any) -> None:
        changes = {s.name: given[s.option] for s in options if given.get(s.option) is not None}
        await change(cog, interaction, declaration, setting, changes)

    # Bound to the cog like a method: discord.py skips its first parameter as it does `self`.
    callback.__qualname__ = f"AdminCog.{setting.name}"
    callback.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        Parameter("cog", Parameter.POSITIONAL_OR_KEYWORD),
        Parameter("interaction", Parameter.POSITIONAL_OR_KEYWORD, annotation=discord.Interaction),
        *(Parameter(s.option, Parameter.KEYWORD_ONLY, annotation=annotation(s, optional=s is not setting),
                    default=Parameter.empty if s is setting else None) for s in options)])
    command = app_commands.Command(**named(f"commands.settings.{setting.name}"), callback=callback)
    app_commands.rename(**{s.option: lstr(f"commands.param.{s.option}.name") for s in options})(command)
    app_commands.describe(**{s.option: lstr(f"commands.param.{s.option}.description") for s in options})(command)
    return command


def annotation(setting: Setting, optional: bool) -> Any:
    """The option's type as discord.py reads it: a bool, or a number with its range."""
    if setting.kind is bool:
        kind: Any = bool
    elif setting.kind is int:
        kind = app_commands.Range[int, int(setting.low or 0), int(setting.high or 0)]
    else:
        kind = app_commands.Range[float, float(setting.low or 0), float(setting.high or 0)]
    return Optional[kind] if optional else kind  # noqa: UP045 - discord.py reads typing.Optional


async def change(cog: ConfigCog, interaction: discord.Interaction, declaration: SettingsDeclaration,
                 setting: Setting, changes: dict[str, Value]) -> None:
    """Store `changes` after checking each; reply what is stored now."""
    for name, value in changes.items():
        checked = declaration.setting(name)
        if not checked.accepts(value):
            key, params = checked.refusal
            await reply(interaction, key, **params)
            return
    async with cog.bot.sessions() as session, session.begin():
        stored = await set_values(session, interaction.guild_id, declaration, changes)
        said = await lines_of(setting, "reply", stored, place(cog, session, interaction.guild_id))
    await send(interaction, "\n".join(shown(interaction, line) for line in said))


def shown(interaction: discord.Interaction, line: Said) -> str:
    """One line in the member's language (a parameter that is a catalog text too)."""
    key, params = line
    return text(interaction, key, **{name: text(interaction, value.key) if isinstance(value, Text) else value
                                     for name, value in params.items()})


async def lines_of(setting: Setting, kind: Literal["reply", "status"], values: Values, where: Place) -> list[Said]:
    """The setting's reply or status lines: its hook's, else the derived one."""
    hook = setting.reply if kind == "reply" else setting.status
    if hook is not None:
        return await hook(values, where)
    return [setting.said(kind, values[setting.name])]


async def status_lines(cog: ConfigCog, interaction: discord.Interaction, session: AsyncSession,
                       declarations: Iterable[SettingsDeclaration]) -> list[str]:
    """Every declared setting's /status line, for the server's managers."""
    where = place(cog, session, interaction.guild_id)
    lines: list[str] = []
    for declaration in declarations:
        values = await read_values(session, declaration, interaction.guild_id)
        for setting in declaration.settings:
            if setting.part_of is None:
                lines += [shown(interaction, line) for line in await lines_of(setting, "status", values, where)]
    return lines
