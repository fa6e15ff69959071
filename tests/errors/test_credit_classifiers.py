"""An empty balance and a request the credit cannot cover are told apart, wherever the words sit.

A failure has one kind, so the two can never both be claimed; what matters is that the
right one is: any balance signal (words or code) anywhere in the failure makes it an
exhausted balance, affordability words alone a credit limit, and neither leaves both out.
The expectation is computed from the chosen fragments, independently of the product code.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from providers.errors import classify_failure

STRICT_BALANCE = [
    "Insufficient Balance", "your balance is insufficient", "no resource package",
    "Please recharge.", "insufficient_user_quota", "You exceeded your current quota",
    "insufficient_quota", "billing hard limit has been reached", "余额不足或无可用资源包,请充值。",
]
# "insufficient credits" / "not enough credits" count as a balance only when bare.
BARE_CREDITS = ["insufficient credits", "not enough credits"]
AFFORD = ["This request requires more credits", "but can only afford 27342", "or fewer max_tokens"]
NOISE = ["", " ", "tokens", "model", "1113 tokens", "credits", "balance", "quota", "\n", "402"]
BALANCE_CODES = {"1113", "insufficient_quota"}

fragments = st.lists(st.sampled_from(STRICT_BALANCE + BARE_CREDITS + AFFORD + NOISE), max_size=4)
code = st.sampled_from([None, "1113", "402", "insufficient_quota", "invalid_request_error", "429"])
status = st.sampled_from([None, 400, 402, 429])
# Where the words travel: the message, the original body or exception, the details.
placed = st.sampled_from(["message", "body", "detail", "exception", "details", "raw"])


def _kwargs(where: str, text: str) -> dict:
    return {
        "message": {"message": text},
        "body": {"original_error": {"error": {"message": text}}},
        "detail": {"original_error": {"detail": text}},
        "exception": {"original_error": RuntimeError(text)},
        "details": {"details": text},
        "raw": {"details": {"raw": text}},
    }[where]


def expected_kind(chosen: list[str], code: str | None) -> str | None:
    balance = any(f in STRICT_BALANCE for f in chosen) or code in BALANCE_CODES
    afford = any(f in AFFORD for f in chosen)
    if balance or (any(f in BARE_CREDITS for f in chosen) and not afford):
        return "balance_exhausted"
    return "credit_limit" if afford else None


@settings(max_examples=400, deadline=None)
@given(fragments, fragments, placed, code, status)
def test_the_right_money_kind_wherever_the_words_sit(in_message, elsewhere, where, code, status):
    text = " ".join(elsewhere)
    kwargs = {**_kwargs(where, text), "message": " ".join(in_message)}
    if where == "message":
        kwargs["message"] = f"{kwargs['message']} {text}"
    err = classify_failure(provider="openrouter", code=code, status=status, **kwargs)
    wanted = expected_kind(in_message + elsewhere, code)
    if wanted is None:
        assert err.kind not in ("balance_exhausted", "credit_limit")
    else:
        assert err.kind == wanted


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(AFFORD), st.sampled_from(STRICT_BALANCE), placed)
def test_exhausted_balance_wins_wherever_the_wording_sits(afford, balance, where):
    """Affordability words alone make a credit limit; any balance words anywhere make it a balance."""
    assert classify_failure(provider="openrouter", status=402, message=afford).kind == "credit_limit"
    kwargs = {**_kwargs(where, balance), "message": afford}
    if where == "message":
        kwargs["message"] = f"{afford}. {balance}"
    assert classify_failure(provider="openrouter", status=402, **kwargs).kind == "balance_exhausted"


def test_bare_credit_wording_is_a_balance_only_when_bare():
    assert classify_failure(provider="openrouter", message="Insufficient credits").kind == "balance_exhausted"
    qualified = classify_failure(provider="openrouter", message="insufficient credits: can only afford 12")
    assert qualified.kind == "credit_limit"
