"""`/privacy export` and `/privacy erase`: a member's own data, in DMs and servers.

Both act on whoever sent the interaction (`interaction.user.id`), never on an option, so
no member can ask for another's data. Export: an ephemeral reply with the file
(`export_file`), at most once a minute per member in this process (`Cooldown`: a file
of everything is a read of every table). Erase: an ephemeral question with Erase and
Cancel (`confirm`); Erase runs every section's erasure in one transaction
(`everything`) and replies what went. Answers streaming for the member at that moment
are left alone (what they record afterwards is theirs to erase again).
"""

from __future__ import annotations

import io
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import discord
from discord import app_commands

from bot.capabilities.privacy.confirm import CONFIRM_SECONDS, ConfirmErase
from bot.capabilities.privacy.everything import erase_everything, exported
from bot.capabilities.privacy.export_file import BOUND, ExportFile, export_file
from bot.capabilities.privacy.kept import KEPT, kept_on_erase
from bot.check.cooldown import Cooldown
from bot.cogs.base import ConfigCog, clip, reply, text
from bot.edge.translator import localized, named

if TYPE_CHECKING:
    from bot.app import LLMBot

log = logging.getLogger(__name__)

EXPORT_SECONDS = 60.0


def file_name(user_id: int) -> str:
    return f"privacy-{user_id}.json"


class PrivacyCog(ConfigCog):
    """The member's own data (see the module docstring)."""

    privacy = app_commands.Group(**named("commands.privacy"))

    def __init__(self, bot: LLMBot) -> None:
        super().__init__(bot)
        self.exports = Cooldown(EXPORT_SECONDS)
        self.confirm_seconds = CONFIRM_SECONDS  # how long the Erase button waits

    @localized(privacy.command, "commands.privacy.export")
    async def export(self, interaction: discord.Interaction) -> None:
        user_id = interaction.user.id
        left = self.exports.take(user_id)
        if left > 0:
            when = f"<t:{int(datetime.now(UTC).timestamp() + left) + 1}:R>"
            await reply(interaction, "commands.error.privacy_export_cooldown", when=when)
            return
        try:
            await interaction.response.defer(ephemeral=True, thinking=True)
            made = await self._file(interaction)
        except BaseException:
            self.exports.give_back(user_id)  # nothing was handed over: the member may try again
            raise
        log.info("member %s exported their data (%d bytes, cut: %s)", user_id, len(made.data), made.cut)
        await interaction.followup.send(clip(self._said(interaction, made)), ephemeral=True,
                                        file=discord.File(io.BytesIO(made.data), filename=file_name(user_id)))

    async def _file(self, interaction: discord.Interaction) -> ExportFile:
        user_id, now = interaction.user.id, datetime.now(UTC)
        async with self.bot.sessions() as session:
            sections = await exported(session, user_id)
        header = {"what": text(interaction, "commands.privacy.file_about"), "user_id": str(user_id),
                  "made_at": now.isoformat(timespec="seconds"), "sections": [name for name, _ in sections],
                  "kept_on_erase": [data.name for data in KEPT if kept_on_erase(data)]}
        return export_file(header, sections)

    def _said(self, interaction: discord.Interaction, made: ExportFile) -> str:
        lines = [text(interaction, "commands.reply.privacy_exported")]
        if made.cut:
            lines.append(text(interaction, "commands.reply.privacy_export_cut", mib=BOUND // (1024 * 1024)))
            lines += [text(interaction, "commands.reply.privacy_section_left_out", section=name, rows=rows)
                      for name, rows in made.left_out.items()]
        return "\n".join(lines)

    @localized(privacy.command, "commands.privacy.erase")
    async def erase(self, interaction: discord.Interaction) -> None:
        view = ConfirmErase(interaction.user.id, interaction.locale, self._erase_now, self.confirm_seconds)
        await interaction.response.send_message(text(interaction, "commands.reply.privacy_erase_confirm"),
                                                view=view, ephemeral=True)
        view.asked = interaction

    async def _erase_now(self, interaction: discord.Interaction) -> str:
        """Erase everything of the presser (the asker: the view checked) in one transaction."""
        user_id = interaction.user.id
        async with self.bot.sessions() as session, session.begin():
            erased = await erase_everything(session, user_id)
        log.info("member %s erased their data (%d rows)", user_id, sum(erased.values()))
        lines = [text(interaction, "commands.reply.privacy_erased")]
        lines += [text(interaction, "commands.reply.privacy_section_erased", section=data.name, rows=erased[data.name])
                  for data in KEPT if not kept_on_erase(data)]
        lines.append(text(interaction, "commands.reply.privacy_erase_kept"))
        return clip("\n".join(lines))


async def setup(bot: LLMBot) -> None:
    await bot.add_cog(PrivacyCog(bot))
