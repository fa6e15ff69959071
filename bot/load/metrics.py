"""The bot's own counters. Every label value comes from a closed vocabulary written here,
so no provider, model or member can grow the number of series."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from providers.metrics import provider_label

DELIVERY_FAILURE_KINDS = ("unavailable", "gone", "forbidden", "sink_error", "internal")
DELIVERY_FAILURES = Counter(
    "answer_delivery_failures_total", "Answers whose text Discord did not take in full", ["reason"]
)
# What could not read or write the database: a turn's configuration (`turn`), the
# configuration poll, a batched key-health, usage, answer or searches write refused, batched writes
# delayed by an outage (once per outage), or dropped after a long one.
DATABASE_ERROR_STAGES = ("turn", "config_poll", "key_health", "usage", "answer", "searches", "write_delayed",
                         "write_dropped")
DATABASE_ERRORS = Counter(
    "database_errors_total", "Turns that could not read or write the database", ["during"]
)
# Questions admitted but waiting for a free turn (MAX_CONCURRENT_ANSWERS), in arrival order.
ANSWERS_QUEUED = Gauge("answers_queued", "Answers waiting for a free turn")


def database_error(during: str) -> None:
    """Count one database failure under a closed label."""
    DATABASE_ERRORS.labels(closed_label(during, DATABASE_ERROR_STAGES)).inc()

# Seconds, from a millisecond stall (healthy) to several seconds (a blocked loop).
_LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
EVENT_LOOP_LAG = Histogram(
    "event_loop_lag_seconds", "How late the event loop woke a sleeper (its overshoot)", buckets=_LAG_BUCKETS
)
ANSWERS_IN_FLIGHT = Gauge("answers_in_flight", "Answers streaming now")
# Seconds: an answer's first message within a second is good, ten is slow, a minute is broken.
_ANSWER_BUCKETS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 30.0, 60.0, 120.0)
FIRST_MESSAGE_SECONDS = Histogram(
    "answer_first_message_seconds",
    "From the question's Discord timestamp to the answer's first message on screen",
    buckets=_ANSWER_BUCKETS,
)
FIRST_TOKEN_SECONDS = Histogram(
    "provider_first_token_seconds",
    "From sending an attempt's request to its first text, thought or tool call",
    ["provider"],
    buckets=_ANSWER_BUCKETS,
)

DISCORD_REQUEST_KINDS = ("send", "edit", "delete", "typing", "interaction", "other")
DISCORD_STATUSES = ("2xx", "3xx", "4xx", "429", "5xx")
RATE_LIMIT_SCOPES = ("user", "global", "shared")
DISCORD_REQUESTS = Counter(
    "discord_requests_total", "Discord REST requests by what they did and how they ended", ["kind", "status"]
)
DISCORD_RATE_LIMITS = Counter(
    "discord_rate_limited_total", "Discord 429 answers by request kind and limit scope", ["kind", "scope"]
)
# The global budget (bot/edge/budget.py): seconds a request waited for a slot, by its
# priority, and interim edits refused (skipped; the next edit carries the newer text).
DISCORD_BUDGET_PRIORITIES = ("urgent", "routine")
_BUDGET_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
DISCORD_BUDGET_WAIT = Histogram(
    "discord_global_budget_wait_seconds", "Seconds a Discord request waited for the global budget",
    ["priority"], buckets=_BUDGET_BUCKETS,
)
DISCORD_INTERIM_SKIPPED = Counter(
    "discord_interim_edits_skipped_total", "Interim edits skipped because the global budget was tight"
)


def closed_label(value: str | None, allowed: tuple[str, ...]) -> str:
    """`value` when it is one of `allowed`, else "other"."""
    return value if value in allowed else "other"


def status_label(status: int) -> str:
    """`429` on its own (the rate limit), else the status class."""
    return "429" if status == 429 else closed_label(f"{status // 100}xx", DISCORD_STATUSES)


def observe_first_content(seconds: float | None, provider: str) -> None:
    """How long a provider took to show anything, observed once its stream ended (timing
    it while the stream ran would put one more layer between the socket and the reader)."""
    if seconds is not None:
        FIRST_TOKEN_SECONDS.labels(provider_label(provider)).observe(seconds)
