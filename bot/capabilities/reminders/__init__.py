"""Reminders: "remind me in an hour to stretch", by `/remind set` or by asking.

Seams it fills (`bot.question.seams`, in `capability.py`): **join** — an answer whose
question may ask for a reminder (`asking.py`: "remind", "alarm", "ping me", "リマインド"…),
in a bot with a database; **tools** — `set_reminder` (`tool.py`), bound to the answer's asker,
channel and server; **after** — the note line "reminder set for …" under the answer, so
nothing is set silently.

`when.py` reads the member's words as a time in their zone (pure); `zones.py` checks zone
names and shows due times with Babel; `setting.py` is what the command and the tool share
(bounds, refusals); `storage.py` holds reminders, time zones and the delivery claim (the
tables: `bot.db.models_reminders`); `delivery.py` is the per-process scheduler that
claims and sends; `commands.py` is `/remind` and `/personal timezone`'s work;
`member_data.py` is `ReminderData` for `/privacy`.
"""
