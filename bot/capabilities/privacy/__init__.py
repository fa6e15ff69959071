"""Privacy: everything the bot keeps about a member, exported (`/privacy export`) and
erased (`/privacy erase`), in DMs and servers.

Seams it fills: none of an answer's (`bot.question.seams`): it joins no answer. It asks
every capability's `MemberData` (`bot.capabilities.member_data`) listed in `kept.py`.

What each table keeps about a member (a user id column), and the decision:

- `personal_configs` (`user_id`): provider, model, the key (exported as its last four
  characters behind the mask, never more), override and server-fallback switches, key
  health. **Export and erase**: the member made it.
- `usage_days` (`user_id`): tokens, messages and searches per day, server, model, payer.
  **Export and erase**, except today's rows: a server's tokens-per-day limits count them,
  and erasing them would hand the member a fresh allowance (they stay until the member
  erases again after the day).
- `message_hours` (`user_id`): messages per hour to a limited route. **Export and
  erase**, except this hour's row (the messages-per-hour limit's count), as above.
- `search_days` (`user_id`): web searches per day on a server's keys. **Export and
  erase**, except today's row (the searches-per-day limit's count), as above.
- `answers` (`asker_id`) and their `answer_parts` (no user column: found through their
  answer): which messages made the question and the answer, its reasoning and sources.
  **Export and erase**: the member's activity.
- `access_rules` (`target_id` with kind `block_member`): a server's managers blocked the
  member. **Export only** (section `blocked_by_servers`; the file's header lists it under
  `kept_on_erase`): erasing it would let a member lift a manager's restriction.
- Not about a member: `config_versions` holds, for scope "member", only a clock value
  saying when the member's settings last changed (an erasure bumps it so every process
  drops its cached copy); servers' keys, fallbacks, personas, channel rules, limits,
  prices, parameters, listen channels and capability settings name no member.

Modules: `sections.py` (the `MemberData` of those tables), `kept.py` (the one list the
commands ask), `everything.py` (read it all; erase it all in one transaction and bump
the member's configuration stamp), `export_file.py` (the bounded JSON file, pure),
`confirm.py` (the Erase / Cancel buttons), `commands.py` (the cog).
"""
