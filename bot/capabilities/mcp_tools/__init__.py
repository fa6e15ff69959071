"""MCP tools: the tools of the operator's MCP servers, offered to the model beside the
built-in ones, each call of a tool that may change something behind the asker's approval.

**Servers** are the operator's: `MCP_SERVERS` names a JSON file in the common
`mcpServers` form (`servers_file.py`; stdio `command`/`args`/`env`, or streamable-HTTP
`url`/`headers`), checked when the settings load (`environment.py`: a malformed file
stops start-up in one line) and read again on `/tools reload` (the bot's owner). The
official `mcp` SDK talks to them (`link.py`, imported only when a server is named); a
server that exits or hangs is restarted with backoff and its tools are not offered
meanwhile (one log line per outage). HTTP URLs come only from that file, trusted like
`DEFAULT_TEXT_BASE_URL`; nothing in Discord sets one.

**Per Discord server**, managers turn each MCP server or one of its tools off or on
(`/tools list|enable|disable`, Manage Server; `storage.py`, tables in
`bot.db.models_mcp_tools`, loaded with the server's configuration).

Seams it fills (`bot.question.seams`, in `capability.py`): **tools** — every tool of the
servers up now that the server's managers left on, named `<server>__<tool>` (`names.py`),
its arguments held to the server's input schema before it runs (`arguments.py`). A tool
the server marks read-only (`readOnlyHint`) runs at once; any other asks the asker with
Allow/Deny buttons first (`approval.py`: a normal message in the answer's channel, since
a mention has no interaction to answer ephemerally) and runs only when allowed (`tool.py`);
its result reaches the model framed as untrusted data, bounded (`framing.py`).

Modules: `hub.py` (the servers kept connected), `commands.py` (the `/tools` cog, which
connects the hub when it loads).
"""
