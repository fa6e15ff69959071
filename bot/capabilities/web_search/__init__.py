"""Web search: an answer grounded on pages of the open web.

Seams it fills (`bot.question.seams`, in `capability.py`): **join** — an answer searches
where the server turned it on, or on the operator's default route with WEB_SEARCH
(`answer.AnswerSearch`: its bound and the member's day); **tools** — the bot's
`web_search` tool bound to that search, when the operator named a service (`tool.py`);
**for_attempt** — native search for a model that searches itself, within the member's
searches left, else the tool (`AnswerSearch.request_for`); **after** — the sources line,
the Sources button, a note when a search failed or was refused (`notes.py`); **books** —
the provider's own searches counted in the member's day (`counting.py`).

`service/` is the operator's search service (SearXNG, Brave, Tavily behind the custom
endpoints' address rules).
"""
