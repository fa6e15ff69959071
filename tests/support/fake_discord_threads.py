"""Threads in the fake Discord, as Discord's API documents them (mixed into `FakeDiscord`).

- `POST /channels/{channel}/messages/{message}/threads` (start a thread from a message)
  answers the thread channel object (type 11, `parent_id`, `owner_id` = the bot, a
  `thread_metadata`); the thread's id is the message's id. A name outside 1-100
  characters is refused (400, 50035), a second thread on the same message too (400,
  160004), a channel made `forbid_threads` answers 403 Missing Permissions (50013).
- Discord then dispatches THREAD_CREATE (`newly_created`; the bot's thread `member` when it opened it)
  and the thread opens with a thread-starter system message (type 21) referencing the
  message it was started on.
- `GET /channels/{thread}` answers the thread object; GUILD_CREATE lists active threads.
Members post in a thread with `send_user_message(..., channel_id=thread_id)`.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Any

THREAD_TYPE = 11  # PUBLIC_THREAD
THREAD_STARTER_MESSAGE = 21
MAX_THREAD_NAME = 100


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()


class FakeThreads:
    """Thread state and routes; `FakeDiscord` provides messages, dispatch and ids."""

    threads: dict[str, dict[str, Any]]
    _threads_refused: set[str]
    _thread_tasks: set[asyncio.Task[None]]

    def _init_threads(self) -> None:
        self.threads = {}
        self._threads_refused = set()
        self._thread_tasks = set()

    def forbid_threads(self, channel_id: str | int) -> None:
        """Starting a thread in this channel answers 403 (messages still work)."""
        self._threads_refused.add(str(channel_id))

    def thread_of(self, message_id: str) -> dict[str, Any] | None:
        """The thread started on `message_id`, if any."""
        return self.threads.get(str(message_id))

    def active_threads(self) -> list[dict[str, Any]]:
        return [thread for thread in self.threads.values() if not thread["thread_metadata"]["archived"]]

    def _thread_route(self, method: str, path: str, body: Any) -> tuple[int, Any] | None:
        if m := re.fullmatch(r"/channels/(\d+)/messages/(\d+)/threads", path):
            if method == "POST":
                return self._start_thread(m.group(1), m.group(2), body or {})
        if (m := re.fullmatch(r"/channels/(\d+)", path)) and method == "GET" and m.group(1) in self.threads:
            return 200, self.threads[m.group(1)]
        return None

    def _start_thread(self, channel_id: str, message_id: str, body: dict[str, Any]) -> tuple[int, Any]:
        message = self.messages.get(message_id)  # type: ignore[attr-defined]
        if message is None or message.deleted or message.channel_id != channel_id:
            return 404, {"message": "Unknown Message", "code": 10008}
        if channel_id in self._threads_refused:
            return 403, {"message": "Missing Permissions", "code": 50013}
        if message_id in self.threads:
            return 400, {"message": "A thread has already been created for this message", "code": 160004}
        name = body.get("name") or ""
        if not 1 <= len(name) <= MAX_THREAD_NAME:
            return 400, {"message": "Invalid Form Body", "code": 50035,
                         "errors": {"name": {"_errors": [{"code": "BASE_TYPE_BAD_LENGTH",
                                                           "message": "Must be between 1 and 100 in length."}]}}}
        owner = self.bot_user["id"]  # type: ignore[attr-defined]
        return 201, self._open(channel_id, message, name, owner, body.get("auto_archive_duration") or 1440)

    async def member_starts_thread(self, message_id: str, owner: dict[str, Any], name: str = "a thread") -> str:
        """A member opens a thread on a channel message (as Discord dispatches it); its id."""
        message = self.messages[message_id]  # type: ignore[attr-defined]
        self._open(message.channel_id, message, name, owner["id"], 1440)
        await asyncio.gather(*self._thread_tasks)
        return message_id

    def _open(self, channel_id: str, message: Any, name: str, owner_id: str, archive_after: int) -> dict[str, Any]:
        thread = self._thread_object(channel_id, message.id, name, owner_id, archive_after)
        self.threads[message.id] = thread
        self._starter_message(thread, message)
        created = {**thread, "newly_created": True}
        if owner_id == self.bot_user["id"]:  # type: ignore[attr-defined]  # the creator joined it: its member object
            created["member"] = {"id": thread["id"], "user_id": owner_id, "join_timestamp": _now_iso(), "flags": 0}
        task = asyncio.get_running_loop().create_task(self.dispatch("THREAD_CREATE", created))  # type: ignore[attr-defined]
        self._thread_tasks.add(task)
        task.add_done_callback(self._thread_tasks.discard)
        return thread

    def _thread_object(self, channel_id: str, thread_id: str, name: str, owner_id: str,
                       archive_after: int) -> dict[str, Any]:
        now = _now_iso()
        return {"id": thread_id, "type": THREAD_TYPE, "guild_id": self.guild_id,  # type: ignore[attr-defined]
                "parent_id": channel_id, "owner_id": owner_id,
                "name": name, "last_message_id": None, "message_count": 0, "member_count": 1,
                "rate_limit_per_user": 0, "flags": 0, "total_message_sent": 0,
                "thread_metadata": {"archived": False, "auto_archive_duration": archive_after,
                                    "archive_timestamp": now, "locked": False, "create_timestamp": now}}

    def _starter_message(self, thread: dict[str, Any], message: Any) -> None:
        """The system message a thread started from a message opens with (no text)."""
        from tests.support.fake_discord_server import StoredMessage, snowflake

        starter = StoredMessage(id=snowflake(), channel_id=thread["id"], author=message.author, content="",
                                history=[""], kind=THREAD_STARTER_MESSAGE,
                                message_reference={"message_id": message.id, "channel_id": message.channel_id,
                                                   "guild_id": thread["guild_id"]})
        self.messages[starter.id] = starter  # type: ignore[attr-defined]
