"""The chat cog: answer a mention, a reply to the bot or a DM by streaming the model's reply.

Deliberately thin: every message goes to `bot.question.flow.Answering`, which turns one
that addresses the bot into a question, checks it, waits its turn and answers it
through the generation turn (`bot.turn.run_generation_turn`). The model may call the
built-in tools (`bot.tools`), which see only the message's channel. `/stop` ends the
caller's latest answer in the channel, or — for members who may manage messages —
every answer there (`bot.load.answers`: an answer is stoppable from the moment it is admitted).

The capabilities this bot composes (`bot.capabilities`), each joining an answer at its
seams (`bot.question.seams`): reading the links a question names, web search, the
records the buttons under answers need (their presses: `bot.capabilities.answer_controls.commands`),
listen channels' gaps, memory (a member's memories and a server's facts), the
`set_reminder` tool (`bot.capabilities.reminders`), the channel catch-up (`/catchup`:
`bot.capabilities.catchup`), images drawn by the `draw_image` tool (`bot.capabilities.images`),
voice messages, heard or transcribed (`bot.capabilities.voice`), and the operator's MCP
servers' tools (`/tools`: `bot.capabilities.mcp_tools`).
"""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.capabilities.answer_controls.buttons import AnswerButton
from bot.capabilities.answer_controls.capability import AnswerRecords
from bot.capabilities.answer_controls.commands import ControlsCog
from bot.capabilities.catchup.capability import CatchUp
from bot.capabilities.catchup.commands import CatchUpCog
from bot.capabilities.images.capability import ImageDrawing
from bot.capabilities.listening.capability import ListenGaps
from bot.capabilities.mcp_tools.capability import McpTools
from bot.capabilities.mcp_tools.commands import ToolsCog
from bot.capabilities.mcp_tools.hub import McpHub
from bot.capabilities.memory.capability import Remembering
from bot.capabilities.reading.capability import LinkReading
from bot.capabilities.reminders.capability import Reminders
from bot.capabilities.voice.capability import Voice
from bot.capabilities.web_search.capability import WebSearch
from bot.capabilities.web_search.service import search_service
from bot.capabilities.web_search.tool import search_tool
from bot.cogs.base import reply
from bot.edge.translator import localized
from bot.load.answers import RunningAnswer
from bot.question.context import Services
from bot.question.flow import Answering
from bot.tools import default_registry
from stream.pacing import ChannelBudgets

log = logging.getLogger(__name__)


class ChatCog(commands.Cog):
    """Answers mentions, replies to the bot and DMs (see the module docstring)."""

    def __init__(self, bot: commands.Bot) -> None:
        # One edit budget per channel, shared by every answer; the bot's parts handed in once.
        # The tools with `web_search` too when the operator named a search service.
        self.search = search_service(bot.settings)
        search_tools = default_registry(search_tool(self.search)) if self.search is not None else None
        self.services = Services.of(bot, ChannelBudgets(), default_registry(), search_tools)
        self.voice = Voice()
        self.mcp = McpHub(bot.settings.MCP_SERVERS)  # the operator's MCP servers (`/tools`' cog connects them)
        self.answering = Answering(self.services, (LinkReading(), WebSearch(), AnswerRecords(), ListenGaps(),
                                                    Remembering(), Reminders(), CatchUp(), ImageDrawing(),
                                                    self.voice, McpTools(self.mcp)))
        self.answers = self.services.answers

    async def cog_unload(self) -> None:
        if self.search is not None:
            await self.search.close()
        await self.voice.close()

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        try:
            await self.answering.handle(message)
        except Exception:  # noqa: BLE001 - one failed answer must not silence the listener
            log.exception("answering message %s failed", message.id)

    @localized(app_commands.command, "commands.stop")
    async def stop(self, interaction: discord.Interaction) -> None:
        """The caller's latest answer here; every answer here for members who manage messages."""
        channel_id = interaction.channel_id or 0
        if interaction.permissions.manage_messages:
            count = self.answers.fire(self.answers.in_channel(channel_id), "stop")
            if count:
                await reply(interaction, "commands.stop.stopped_all", count=count)
                return
        else:
            mine = self.answers.latest_of(channel_id, interaction.user.id)
            if mine is not None and self.answers.fire([mine], "stop"):
                await reply(interaction, "commands.stop.stopped", question=self._link(interaction, mine))
                return
        await reply(interaction, "commands.stop.nothing")

    @staticmethod
    def _link(interaction: discord.Interaction, answer: RunningAnswer) -> str:
        guild = str(answer.guild_id) if answer.guild_id is not None else "@me"
        return f"https://discord.com/channels/{guild}/{answer.channel_id}/{answer.question_id}"


async def setup(bot: commands.Bot) -> None:
    """The chat cog, and the answer buttons' and /catchup's cogs on the same answering; the buttons'
    one dynamic item is registered here, once, so presses work after a restart."""
    chat = ChatCog(bot)
    await bot.add_cog(chat)
    await bot.add_cog(ControlsCog(chat.answering))
    await bot.add_cog(CatchUpCog(chat.answering))
    await bot.add_cog(ToolsCog(bot, chat.mcp))
    bot.add_dynamic_items(AnswerButton)
