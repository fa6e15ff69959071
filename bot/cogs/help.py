"""`/help`: the commands the invoker may use here, one line each, grouped, in their language.

The list is the bot's own command tree, walked at each call: a command added later is
listed without editing this module (a new root lands under "Other" until it is given a
group below). Names and descriptions are the ones the tree synced through the bot's
translator (`bot.edge.command_names`); a command shows as its mention once its id is known.

Who sees what: commands under a Manage Server root only for members with Manage Server
inside a server; in a DM only the commands that work in DMs; a command kept under its old
name (`RENAMED_TO`) never.

How commands are named (the rule the names follow; a new command follows it too):
- the last word is the verb, or the name of the one setting the command sets
  (`/settings history`, `/personal model`, `/channels mode`);
- `add`/`remove` put an item into a collection and take it out (`/keys add`,
  `/model fallback add`); `set`/`clear` give one value and take it away (`/model set`,
  `/persona clear`, `/personal key set`);
- `list` shows a collection (`/keys list`, `/channels list`, `/access list`), `show` one
  thing (`/persona show`, `/limits show`);
- paired verbs undo each other: `allow`/`deny`, `block`/`unblock`, `listen`/`listen-stop`.
`/personal key-set` and `/personal key-remove` became `/personal key set` and
`/personal key clear`; the old names answer for one release and say the new one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.cogs.base import RENAMED_TO, ConfigCog, ManagerGroup, is_manager, text
from bot.edge.command_names import for_discord, installed
from bot.edge.limits import (
    EMBED_FIELD_COUNT_LIMIT,
    EMBED_FIELD_VALUE_LIMIT,
    EMBED_TOTAL_LIMIT,
)
from bot.edge.translator import localized
from bot.errors.presentation import trim

if TYPE_CHECKING:
    from bot.app import LLMBot

# A root command -> the catalog key of its group; the groups show in this order.
GROUPS: dict[str, str] = {
    "stop": "commands.help.group.asking", "status": "commands.help.group.asking",
    "catchup": "commands.help.group.asking", "imagine": "commands.help.group.asking",
    "help": "commands.help.group.asking", "remind": "commands.help.group.asking",
    "personal": "commands.help.group.personal", "privacy": "commands.help.group.personal",
    "memory": "commands.help.group.personal",
    "settings": "commands.help.group.settings", "persona": "commands.help.group.settings",
    "tools": "commands.help.group.settings",
    "keys": "commands.help.group.models", "model": "commands.help.group.models",
    "limits": "commands.help.group.limits", "usage": "commands.help.group.limits",
    "channels": "commands.help.group.channels", "access": "commands.help.group.channels",
}
OTHER = "commands.help.group.other"
ORDER = [*dict.fromkeys(GROUPS.values()), OTHER]
LINE_CHARS = 300  # a line is a command and its description: never near a field's limit
CONTINUED = "\u200b"  # a group's second field: Discord needs a name, this one shows nothing
COLOR = 0x5865F2
Field = tuple[str, str]


def may_use(command: app_commands.Command, interaction: discord.Interaction) -> bool:
    """Whether the invoker may run `command` where they asked (see the module docstring)."""
    if RENAMED_TO in command.extras:
        return False
    if isinstance(command.parent, ManagerGroup) and not is_manager(interaction):
        return False  # a managers' subgroup of a root every member uses (`/memory server`)
    root = command.root_parent or command
    if interaction.guild_id is None:
        return not root.guild_only
    permissions = root.default_permissions
    return permissions is None or not permissions.manage_guild or is_manager(interaction)


def line(command: app_commands.Command, interaction: discord.Interaction) -> str:
    """`</keys add:id> — Add an API key…`, in the invoker's language."""
    named = installed().get(tuple(command.qualified_name.split(" ")))
    if named is None:  # not synced in this process: the tree's own English
        return trim(f"`/{command.qualified_name}` — {command.description}", LINE_CHARS)
    description = for_discord(named.localized(interaction.locale)[1], interaction.locale)
    return trim(f"{named.shown(interaction.locale)} — {description}", LINE_CHARS)


def grouped(commands: list[app_commands.Command], interaction: discord.Interaction) -> list[Field]:
    """One field per group in `ORDER` (a long group continues in the next field)."""
    lines: dict[str, list[str]] = {key: [] for key in ORDER}
    for command in commands:
        root = command.root_parent or command
        lines[GROUPS.get(root.name, OTHER)].append(line(command, interaction))
    fields: list[Field] = []
    for key, group in lines.items():
        name, value = text(interaction, key), ""
        for entry in group:
            if value and len(value) + 1 + len(entry) > EMBED_FIELD_VALUE_LIMIT:
                fields.append((name, value))
                name, value = CONTINUED, ""
            value = f"{value}\n{entry}" if value else entry
        if value:
            fields.append((name, value))
    return fields


def embeds_of(title: str, fields: list[Field], footer: str) -> list[discord.Embed]:
    """The fields in as few embeds as Discord's limits allow: each within its field count
    and total, the title on the first, the footer on the last; one embed per message, as the
    total counts every embed of a message."""
    room = EMBED_TOTAL_LIMIT - len(title) - len(footer)
    embeds = [discord.Embed(title=title, color=COLOR)]
    size = 0
    for name, value in fields:
        if len(embeds[-1].fields) >= EMBED_FIELD_COUNT_LIMIT or size + len(name) + len(value) > room:
            embeds.append(discord.Embed(color=COLOR))
            size = 0
        embeds[-1].add_field(name=name, value=value, inline=False)
        size += len(name) + len(value)
    if footer:
        embeds[-1].set_footer(text=footer)
    return embeds


def footer_of(interaction: discord.Interaction) -> str:
    """What the list leaves out: a DM's server commands, a member's manager commands."""
    if interaction.guild_id is None:
        return text(interaction, "commands.help.more_in_servers")
    return "" if is_manager(interaction) else text(interaction, "commands.help.more_for_managers")


class HelpCog(ConfigCog):
    @localized(app_commands.command, "commands.help")
    async def help(self, interaction: discord.Interaction) -> None:
        usable = [c for c in self.bot.tree.walk_commands()
                  if isinstance(c, app_commands.Command) and may_use(c, interaction)]
        fields = grouped(usable, interaction)
        embeds = embeds_of(text(interaction, "commands.help.title"), fields, footer_of(interaction))
        await interaction.response.send_message(embed=embeds[0], ephemeral=True)
        for embed in embeds[1:]:
            await interaction.followup.send(embed=embed, ephemeral=True)


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(HelpCog(bot))
