"""The bot's own counters. Every label value comes from a closed vocabulary written here,
so no provider, model or member can grow the number of series."""

from __future__ import annotations

from prometheus_client import Counter

DELIVERY_FAILURE_KINDS = ("unavailable", "gone", "forbidden", "sink_error", "internal")
DELIVERY_FAILURES = Counter(
    "answer_delivery_failures_total", "Answers whose text Discord did not take in full", ["reason"]
)
DATABASE_ERRORS = Counter(
    "database_errors_total", "Turns that could not read or write the database", ["during"]
)


def closed_label(value: str | None, allowed: tuple[str, ...]) -> str:
    """`value` when it is one of `allowed`, else "other"."""
    return value if value in allowed else "other"
