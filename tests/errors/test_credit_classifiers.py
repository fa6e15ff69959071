"""Issue 5 item 1: the two credit classifiers never both fire (C4), whatever the input."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from providers.errors import (
    is_account_balance_exhausted_error,
    is_credit_affordability_error,
)
from providers.types import ERROR_TYPES, ProviderError

BALANCE = [
    "Insufficient Balance", "your balance is insufficient", "no resource package",
    "Please recharge.", "insufficient_user_quota", "You exceeded your current quota",
    "insufficient_quota", "billing hard limit has been reached", "insufficient credits",
    "not enough credits", "余额不足或无可用资源包,请充值。", '{"code": "1113"}',
]
# C3 counts "insufficient credits" / "not enough credits" only when bare (no C4 wording).
BARE_CREDITS = ["insufficient credits", "not enough credits"]
STRICT_BALANCE = [b for b in BALANCE if b not in BARE_CREDITS]
AFFORD = ["This request requires more credits", "but can only afford 27342", "or fewer max_tokens"]
NOISE = ["", " ", "tokens", "model", "1113 tokens", "credits", "balance", "quota", "\n", "402"]
fragment = st.sampled_from(BALANCE + AFFORD + NOISE) | st.text(max_size=12)
text = st.lists(fragment, max_size=5).map(" ".join)
code = st.sampled_from([None, "1113", "402", "insufficient_quota", "invalid_request_error", "429"])
original = st.one_of(
    st.none(), text, text.map(lambda m: {"error": {"message": m}}), text.map(lambda m: {"detail": m}),
    text.map(RuntimeError),
)
details = st.one_of(st.none(), text, text.map(lambda m: {"raw": m}))
errors = st.builds(
    ProviderError, type=st.sampled_from(sorted(ERROR_TYPES)), message=text, retryable=st.booleans(),
    code=code, status=st.sampled_from([None, 400, 402, 429]),
    provider=st.sampled_from([None, "openrouter", "deepseek", "zai", "openai"]),
    original_error=original, details=details,
)


@settings(max_examples=300, deadline=None)
@given(errors)
def test_balance_exhausted_and_affordability_are_never_both_true(err):
    assert not (is_account_balance_exhausted_error(err) and is_credit_affordability_error(err))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(AFFORD), st.sampled_from(STRICT_BALANCE),
       st.sampled_from(["message", "original", "details"]))
def test_exhausted_balance_wins_wherever_the_wording_sits(afford, balance, where):
    """Affordability wording alone fires C4; adding any balance wording anywhere moves it to C3."""
    alone = ProviderError(type="api_error", message=afford, retryable=False, code=None)
    assert is_credit_affordability_error(alone) and not is_account_balance_exhausted_error(alone)
    fields = {"message": afford, "original_error": None, "details": None}
    if where == "message":
        fields["message"] = f"{afford}. {balance}"
    elif where == "original":
        fields["original_error"] = {"error": {"message": balance}}
    else:
        fields["details"] = balance
    both = ProviderError(type="api_error", retryable=False, code=None, **fields)
    assert is_account_balance_exhausted_error(both)
    assert not is_credit_affordability_error(both)


def test_bare_credit_wording_is_balance_only_when_bare():
    bare = ProviderError(type="api_error", message="Insufficient credits", retryable=False, code=None)
    assert is_account_balance_exhausted_error(bare) and not is_credit_affordability_error(bare)
    qualified = ProviderError(type="api_error", message="insufficient credits: can only afford 12",
                              retryable=False, code=None)
    assert is_credit_affordability_error(qualified)
    assert not is_account_balance_exhausted_error(qualified)
