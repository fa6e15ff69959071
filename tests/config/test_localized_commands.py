"""`localized` declares a command from its key prefix: the payload Discord receives is the
one the hand-written stack of `command(name=…, description=…)`, `rename` and `describe`
gave, for a function and for a method of a group; an override names a parameter's own key."""

from __future__ import annotations

import discord
import pytest
from discord import app_commands

from bot.edge.translator import BabelTranslator, localized, lstr, named


async def payload(command: app_commands.Command | app_commands.Group) -> dict:
    tree = app_commands.CommandTree(discord.Client(intents=discord.Intents.none()))
    return await command.get_translated_payload(tree, BabelTranslator())


async def test_a_function_command_is_the_hand_written_one() -> None:
    @app_commands.command(name=lstr("commands.keys.remove.name"), description=lstr("commands.keys.remove.description"),
                          extras={"kept": True})
    @app_commands.rename(provider=lstr("commands.param.provider.name"), label=lstr("commands.param.rule_channel.name"))
    @app_commands.describe(provider=lstr("commands.param.provider.description"),
                           label=lstr("commands.param.rule_channel.description"))
    async def by_hand(interaction: discord.Interaction, provider: str, label: str | None = None) -> None:
        """By hand."""

    @localized(app_commands.command, "commands.keys.remove", params={"label": "rule_channel"}, extras={"kept": True})
    async def by_key(interaction: discord.Interaction, provider: str, label: str | None = None) -> None:
        """By key."""

    assert await payload(by_key) == await payload(by_hand)
    assert by_key.extras == {"kept": True}


async def test_a_method_of_a_group_is_the_hand_written_one() -> None:
    class ByHand(app_commands.Group):
        @app_commands.command(name=lstr("commands.model.set.name"), description=lstr("commands.model.set.description"))
        @app_commands.rename(provider=lstr("commands.param.provider.name"), model=lstr("commands.param.model.name"))
        @app_commands.describe(provider=lstr("commands.param.provider.description"),
                               model=lstr("commands.param.model.description"))
        async def set_model(self, interaction: discord.Interaction, provider: str, model: str) -> None:
            """By hand."""

    class ByKey(app_commands.Group):
        @localized(app_commands.command, "commands.model.set")
        async def set_model(self, interaction: discord.Interaction, provider: str, model: str) -> None:
            """By key."""

    by_hand, by_key = ByHand(**named("commands.model")), ByKey(**named("commands.model"))
    assert await payload(by_key) == await payload(by_hand)


def test_an_override_for_a_parameter_the_command_lacks_is_refused() -> None:
    with pytest.raises(TypeError, match="no parameter"):
        @localized(app_commands.command, "commands.keys.remove", params={"lable": "label"})
        async def remove(interaction: discord.Interaction, label: str) -> None:
            """A typo in the override."""
