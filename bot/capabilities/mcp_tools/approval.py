"""Allow / Deny: the asker decides, in a prompt only they see, whether a server tool that
may change something runs.

Discord shows a message to one member only as the response to an interaction. So where
the question came by a slash command (the catch-up) the prompt is an ephemeral follow-up
of it; in a DM it is a message there (only the asker reads it). A question asked by a
mention, a reply or in a listen channel has no interaction: the channel gets a notice
that mentions the asker (and no one else), names the tool and its server, and has one
**Review** button. The asker's press is the interaction: its response is the ephemeral
prompt with the arguments (a bounded code block) and Allow / Deny. Anyone else's press
reads an ephemeral refusal and nothing changes. The first Allow or Deny decides; after it,
APPROVAL_SECONDS without one, or the answer stopped, every message of the call becomes
one line saying what happened, without the arguments or the buttons. Plain discord.py
views kept in this process: after a restart their buttons answer nothing (the answer
that asked is gone too).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import discord

from bot.cogs.base import reply
from bot.tools.registry import ToolContext
from providers.i18n import t
from stream.interrupt import Interrupt

log = logging.getLogger(__name__)

APPROVAL_SECONDS = 60.0
MAX_SHOWN_ARGUMENTS = 1_200
Decision = Literal["allowed", "denied", "expired", "stopped", "unasked"]
# An outcome -> what the call's messages then say (literal keys: the catalog check reads them).
OUTCOMES = {"allowed": "chat.mcp.allowed", "denied": "chat.mcp.denied", "expired": "chat.mcp.expired",
            "stopped": "chat.mcp.stopped"}
Edit = Callable[[str], Awaitable[Any]]


@dataclass
class AskedCall:
    """One call awaiting the asker: what the prompts name, the first press's verdict, and
    how to turn each message of the call into its last line."""

    asker_id: int
    locale: str | None
    named: dict[str, str]  # the tool and its server, as the messages name them
    arguments: dict[str, Any]
    deadline: float  # on the event loop's clock
    verdict: asyncio.Future[bool] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    # Each message still showing buttons, by its view, and how to edit it.
    open_edits: dict[discord.ui.View, Edit] = field(default_factory=dict)

    def seconds_left(self) -> float:
        return max(self.deadline - asyncio.get_running_loop().time(), 0.0)

    def prompt(self) -> str:
        """The private prompt: the tool, its server, the time left, the arguments."""
        body = t("chat.mcp.ask", self.locale, seconds=int(self.seconds_left()), **self.named)
        return f"{body}\n{code_block(self.arguments)}"

    def decided(self, outcome: Decision) -> str:
        """The one line every message of the call becomes."""
        return t("chat.mcp.decided", self.locale, outcome=t(OUTCOMES[outcome], self.locale), **self.named)



class AskerOnly(discord.ui.View):
    """A view only the asker may press; anyone else reads a line only they see."""

    def __init__(self, call: AskedCall) -> None:
        super().__init__(timeout=call.seconds_left() or 0.01)
        self.call = call

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if interaction.user.id == self.call.asker_id:
            return True
        await reply(interaction, "commands.error.mcp_not_yours")
        return False

    def button(self, key: str, style: discord.ButtonStyle, pressed: Callable[[discord.Interaction], Awaitable[None]]) -> None:
        made: discord.ui.Button[AskerOnly] = discord.ui.Button(label=t(key, self.call.locale), style=style)
        made.callback = pressed  # type: ignore[method-assign]
        self.add_item(made)

    async def on_error(self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any], /) -> None:
        log.error("a tool approval press failed with %s", type(error).__name__, exc_info=error)


class Approval(AskerOnly):
    """Allow and Deny on one prompt; the first press of any prompt of the call decides."""

    def __init__(self, call: AskedCall) -> None:
        super().__init__(call)
        self.button("chat.mcp.button_allow", discord.ButtonStyle.success, self._pressed(True))
        self.button("chat.mcp.button_deny", discord.ButtonStyle.danger, self._pressed(False))

    def _pressed(self, allowed: bool) -> Callable[[discord.Interaction], Awaitable[None]]:
        async def pressed(interaction: discord.Interaction) -> None:
            verdict = self.call.verdict
            if verdict.cancelled():  # the deadline passed or the answer stopped
                await reply(interaction, "commands.error.mcp_decided")
                return
            if not verdict.done():
                verdict.set_result(allowed)
            self.call.open_edits.pop(self, None)  # this response edits it
            self.stop()
            outcome: Decision = "allowed" if verdict.result() else "denied"
            await interaction.response.edit_message(content=self.call.decided(outcome), view=None)
        return pressed


class Review(AskerOnly):
    """The channel's notice: its one button answers the asker with the private prompt."""

    def __init__(self, call: AskedCall) -> None:
        super().__init__(call)
        self.button("chat.mcp.button_review", discord.ButtonStyle.primary, self._review)

    async def _review(self, interaction: discord.Interaction) -> None:
        call = self.call
        if call.verdict.done():
            await reply(interaction, "commands.error.mcp_decided")
            return
        prompt = Approval(call)
        await interaction.response.send_message(call.prompt(), view=prompt, ephemeral=True,
                                                allowed_mentions=discord.AllowedMentions.none())
        call.open_edits[prompt] = lambda line: interaction.edit_original_response(content=line, view=None)


async def ask_asker(context: ToolContext, locale: str | None, server: str, tool: str,
                    arguments: dict[str, Any], seconds: float = APPROVAL_SECONDS,
                    stop: Interrupt | None = None) -> Decision:
    """Ask the asker where only they see the arguments, and wait for their press (or the
    answer's `stop`: /stop, a restart)."""
    if context.channel is None or context.asker is None:
        return "unasked"
    if stop is not None and stop.is_set():
        return "stopped"
    call = AskedCall(context.asker.id, locale, {"tool": shown_name(tool), "server": shown_name(server)},
                     arguments, asyncio.get_running_loop().time() + seconds)
    try:
        await _first_message(context, call)
    except discord.HTTPException as exc:
        log.warning("a tool approval prompt could not be posted (%s): the tool does not run", type(exc).__name__)
        return "unasked"
    outcome = await _decided_or_stopped(call, stop)
    await _close(call, outcome)
    return outcome


async def _first_message(context: ToolContext, call: AskedCall) -> None:
    """The command's ephemeral follow-up, the DM's prompt, or the channel's notice."""
    view: discord.ui.View
    if context.interaction is not None:
        view = Approval(call)
        sent = await context.interaction.followup.send(call.prompt(), view=view, ephemeral=True, wait=True,
                                                       allowed_mentions=discord.AllowedMentions.none())
    elif isinstance(context.channel, discord.DMChannel):
        view = Approval(call)
        sent = await context.channel.send(call.prompt(), view=view)
    else:
        view = Review(call)
        notice = t("chat.mcp.notice", call.locale, asker=context.asker.mention, seconds=int(call.seconds_left()),
                   **call.named)
        only_asker = discord.AllowedMentions(everyone=False, roles=False, users=[context.asker])
        sent = await context.channel.send(notice, view=view, allowed_mentions=only_asker)
    call.open_edits[view] = lambda line: sent.edit(content=line, view=None)


async def _decided_or_stopped(call: AskedCall, stop: Interrupt | None) -> Decision:
    """Whichever comes first: a press, the deadline, the answer stopped."""
    stopped = asyncio.ensure_future(stop.wait()) if stop is not None else None
    try:
        await asyncio.wait({call.verdict} | ({stopped} if stopped else set()), timeout=call.seconds_left(),
                           return_when=asyncio.FIRST_COMPLETED)
    finally:
        if stopped is not None and not stopped.done():
            stopped.cancel()
    if call.verdict.done():
        return "allowed" if call.verdict.result() else "denied"
    call.verdict.cancel()  # a press from now on is answered as decided
    return "stopped" if stopped is not None and stopped.done() else "expired"


async def _close(call: AskedCall, outcome: Decision) -> None:
    """Every message of the call becomes its last line (the pressed prompt already has);
    one that cannot be edited (deleted, its token expired) is left."""
    line = call.decided(outcome)
    for view, edit in list(call.open_edits.items()):
        view.stop()
        try:
            await edit(line)
        except discord.HTTPException as exc:
            log.info("a tool approval message was not updated (%s)", type(exc).__name__)


def shown_name(name: str) -> str:
    """A server's or tool's name as a message shows it: no markdown, no mentions, bounded."""
    return discord.utils.escape_mentions(discord.utils.escape_markdown(name[:100]))


def code_block(arguments: dict[str, Any]) -> str:
    """The arguments as indented JSON in a code block nothing inside can close, bounded."""
    text = json.dumps(arguments, ensure_ascii=False, indent=1, default=str)
    if len(text) > MAX_SHOWN_ARGUMENTS:
        text = text[:MAX_SHOWN_ARGUMENTS] + "\n…"
    return "```json\n" + text.replace("```", "`\u200b`\u200b`") + "\n```"
