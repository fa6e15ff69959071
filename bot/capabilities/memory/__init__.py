"""Memory: facts a member asked the bot to keep about them, and facts a server's
managers set for everyone there.

**Opt-in per member** (one switch everywhere, off by default: nothing stored, no tool
offered, nothing recalled). `/memory on|off|list|forget|clear` in servers and DMs;
off stops saving and recalling and keeps what was saved until `/memory clear`.

**Where memories apply**: a memory keeps the server it was saved in (none: a DM). In a
server an answer recalls the asker's memories saved in that server; in a DM it recalls
all of them (a DM is private to the member). Never another member's. `/memory list`,
`forget` and `clear` act on what would be recalled where they run.

Seams it fills (`bot.question.seams`, in `capability.py`): **prepare** — the server's
facts and the asker's memories go into the system prompt after the persona, framed as
data and bounded (`recall.py`); **tools** — `remember`, bound to the answer, while the
asker's memory is on (`tool.py`: saved when it runs, ≤ 500 characters, 100 per member,
the oldest dropped); **after** — the note line "remembered: …", or with memory off and a
question asking to remember (`asking.py`), a pointer to `/memory on` (`notes.py`).

Cost: the member's switch and memories are kept in the configuration cache
(`bot.load.config_cache`, one indexed read on a miss, dropped by the "member" stamp
every memory write takes); a member who never turned memory on costs no read. The
server's facts load with the server's configuration ("server" stamp).

Modules: `storage.py` (tables in `bot.db.models_memory`), `commands.py` (the `/memory`
cog, `/memory server add|list|remove` for managers), `member_data.py` (`MemoryData`:
export and erasure for `/privacy`).
"""
