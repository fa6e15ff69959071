"""The link a server owner opens to add the bot, with exactly the permissions it uses.

Each permission is here because a feature needs it: reading the channels it is asked
in, sending answers (also in threads), opening a thread for an answer when a server turns
threads on, error and notice embeds, the thought-log and long-answer attachments, and
the reply chain it reads as history.
"""

from __future__ import annotations

import discord

INVITE_SCOPES = ("bot", "applications.commands")
MESSAGE_CONTENT_MISSING = (
    "Discord refused the Message Content intent: enable it for this application in the developer "
    "portal (https://discord.com/developers/applications > your app > Bot > Privileged Gateway "
    "Intents > Message Content Intent), then start the bot again."
)


def required_permissions() -> discord.Permissions:
    return discord.Permissions(view_channel=True, send_messages=True, send_messages_in_threads=True,
                               create_public_threads=True, embed_links=True, attach_files=True,
                               read_message_history=True)


def invite_url(application_id: int) -> str:
    return discord.utils.oauth_url(application_id, permissions=required_permissions(), scopes=INVITE_SCOPES)
