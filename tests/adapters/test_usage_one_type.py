"""Usage is one type from the provider's edge to the database: the counts an adapter
converted are what the day row adds, with no second conversion.

Real parts: the OpenAI SDK (the Responses API) against the local replay server, `counts_for`, the write-behind
merge of two answers (`UsageWrite.plus`) and the row's values (`UsageAdd.params`).
"""

from __future__ import annotations

from datetime import date

from bot.load.bookkeeping import UsageWrite
from bot.repo.usage import UsageAdd, UsageKey
from bot.usage.tokens import TokenCounts, add_usage, counts_for
from providers.types import Usage
from tests.support import data_openai_responses as rx
from tests.support.drive_adapter import HELLO, served_outcome
from tests.support.fake_provider_server import ProviderReplayServer, Reply

KEY = UsageKey(1, 2, "openai", "m-test", "server", date(2026, 12, 3))


async def test_the_adapters_usage_is_what_the_day_row_adds():
    async with ProviderReplayServer() as server:
        body = rx.sse_body([rx.created(), *rx.message(0, ["Counted."]),
                            rx.completed(rx.usage(100, 50, reasoning=30, cached=40))])
        out = await served_outcome(server, "openai", Reply(body=body))
    usage = out.done.usage
    assert usage == Usage(100, 50, 30, 40, 150)
    counts = counts_for(usage, HELLO, "Counted.")
    assert counts is usage  # no second conversion
    assert TokenCounts is Usage
    both = UsageWrite(UsageAdd(KEY, counts)).plus(UsageWrite(UsageAdd(KEY, counts)))
    params = both.add.params()
    assert (params["input_tokens"], params["output_tokens"], params["reasoning_tokens"],
            params["cached_input_tokens"], params["messages"], params["estimated"]) == (200, 100, 60, 80, 2, False)


def test_unreported_fields_stay_none_in_sums_and_add_nothing_to_the_row():
    partial = Usage(input_tokens=7, output_tokens=3)
    assert add_usage(partial, Usage(output_tokens=2)) == Usage(7, 5)
    assert add_usage(None, partial) is partial
    estimated = counts_for(None, HELLO, "x" * 40)
    assert estimated.estimated and estimated.output_tokens == 10
    assert (partial + estimated).estimated
    params = UsageAdd(KEY, partial).params()
    assert (params["reasoning_tokens"], params["cached_input_tokens"]) == (0, 0)
