"""Web search: an answer grounded on pages of the open web.

Seams it fills (`bot.question.seams`): **prepare** — the answer's search (`WebSearch.join`:
on where the server turned it on, or on the operator's default route with WEB_SEARCH) and
the bot's `web_search` tool when the operator named a service; **each attempt** — native
search for a model that searches itself, within the member's searches left, else the
tool (`answer.AnswerSearch.request_for`); **after** — the sources line, the Sources
button, a note when a search failed or was refused (`notes.py`); **books** — the
provider's own searches counted in the member's day.

Its parts: `answer.py` (one answer's search), `service/` (SearXNG, Brave, Tavily behind
the custom endpoints' address rules), `notes.py`, `capability.py` (the seams).
"""
