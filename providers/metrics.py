"""Process-wide counters, exposed by the bot when METRICS_PORT is set.

prometheus-client counters are thread-safe and cheap; they are the only process state
the providers layer keeps, and they never hold keys or message text.
"""

from prometheus_client import Counter

from providers.identity import KNOWN_PROVIDERS

# Both labels are closed vocabularies (a known provider or "other", a FailureKind): a
# provider's own codes are unbounded, and each label value would be a new time series.
PROVIDER_ERRORS = Counter(
    "provider_errors_total", "Provider failures by provider and failure kind", ["provider", "kind"]
)
KEY_ROTATIONS = Counter("key_rotations_total", "Server keys rotated after a failure", ["provider"])
FALLBACKS_USED = Counter("model_fallbacks_used_total", "Turns answered by a fallback model", ["provider"])
# By provider only: the tool name is the model's choice (unbounded); the log line names it.
TOOL_ARGUMENTS_TRUNCATED = Counter(
    "tool_arguments_truncated_total",
    "Tool calls whose cut arguments were partly recovered by repair",
    ["provider"],
)


def provider_label(provider: str | None) -> str:
    """A known provider name, or "other" (a typo, a hostile value): label values come from
    a closed vocabulary."""

    return provider if provider in KNOWN_PROVIDERS else "other"
