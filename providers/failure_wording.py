"""What a failure's words say, for failures whose codes and structured details said nothing exact.

Providers reuse generic codes (`invalid_request_error`, a bare 400 or 429) for very
different causes, so the message decides between them: a model that does not exist, a
safety refusal, an empty balance, a plan without the model, a request the remaining
credit cannot pay for, a conversation too long, a key that is not valid.
"""

from __future__ import annotations

import re

from providers.types import FailureKind


def _rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)


_DEPRECATED_OTHER = re.compile(
    r"\b(?:parameters?|fields?|arguments?|options?|headers?|endpoints?|apis?|versions?|features?)\b",
    re.IGNORECASE,
)
_MENTIONS_MODEL = re.compile(r"\bmodels?\b", re.IGNORECASE)
_DEPRECATED = re.compile(r"\bdeprecated\b", re.IGNORECASE)
# A model id: quoted/backticked, or a bare token that is not one of the words that follow
# "model" in messages about something else ("model output is invalid").
_MODEL_ID = (
    r"(?:[`'\"][^`'\"\s]+[`'\"]|(?!(?:output|outputs|response|responses|input|request|message"
    r"|content|call|calls|result|generation)\b)[\w./:@-]+)"
)
_MODEL_ERROR = _rx(
    r"\bunsupported model\b",
    r"\b(?:invalid|unknown|unrecognized) model\b",
    r"\bnot a valid model\b",
    rf"\bmodel {_MODEL_ID} (?:is )?(?:not supported|unsupported|not found|unavailable|invalid"
    r"|does not exist)\b",
    r"\bmodels/\S+ is not found\b",
    r"\bmodel (?:not found|does not exist|is not available)\b",
    r"\bno such model\b",
    r"\bmodel_not_found\b",
    # OpenRouter's 404 when no upstream serves the model with what the request needs
    # ("No endpoints found that support tool use", "... for <model>").
    r"\bno endpoints found\b",
)
_CONTEXT_LENGTH = _rx(
    r"\bmaximum context length\b",
    r"\bcontext length (?:is|of|exceeded)\b",
    r"\bcontext_length_exceeded\b",
    r"\bcontext window (?:is )?exceeded\b",
    r"\breduce the length of\b",
    r"\bprompt is too long\b",
)
_BALANCE = _rx(
    r"\binsufficient balance\b",
    r"\bbalance is insufficient\b",
    r"\bno resource package\b",
    r"\bplease recharge\b",
    r"\binsufficient_user_quota\b",
    r"\bexceeded your current quota\b",
    r"\binsufficient_quota\b",
    r"\bbilling hard limit has been reached\b",
    # Anthropic's wording of an exhausted prepaid balance (a 400 invalid_request_error).
    r"\bcredit balance is too low\b",
    # Z.ai's mainland wording of the same 1113 error ("balance insufficient", "recharge").
    r"余额不足",
    r"无可用资源包",
    r"请充值",
)
# Z.ai's billing code inside a relayed body ("code": "1113").
_ZAI_BILLING_CODE = re.compile(r'"code"\s*:\s*"?1113\b')
_BARE_CREDITS = _rx(r"\binsufficient credits\b", r"\bnot enough credits\b")
_AFFORDABILITY = _rx(r"\brequires more credits\b", r"\bcan only afford\b", r"\bfewer max_tokens\b")
# Z.ai (code 1311, sent as a 429): "Your current subscription plan does not yet include
# access to GLM-5". The key works; its plan does not cover this model.
PLAN_EXCLUDES_MODEL = _rx(
    r"\bplan does not (?:yet )?include access\b",
    r"\bnot (?:included|available) (?:in|on|with) your (?:current )?(?:plan|subscription)\b",
)
_CONTENT_BLOCK = _rx(
    r"\bcontent[ _-]?filter(?:ing|ed)?\b",
    r"\bcontent[ _-]?policy\b",
    r"\bcontent management policy\b",
    r"\bsafety system\b",
    r"\binput was flagged\b",
    r"\bflagged by (?:the )?moderation\b",
)
INVALID_KEY = _rx(
    r"\bapi[ _]key not valid\b",
    r"\binvalid[ _]api[ _]key\b",
    r"\bincorrect api key\b",
    r"\bapi_key_invalid\b",
    r"\binvalid x-api-key\b",
)


def names_model_error(text: str) -> bool:
    """The words say the model id itself is the problem (unknown, unsupported, deprecated)."""
    if _MODEL_ERROR.search(text):
        return True
    if _DEPRECATED.search(text):
        return bool(_MENTIONS_MODEL.search(text)) or not _DEPRECATED_OTHER.search(text)
    return False


def names_exhausted_balance(text: str) -> bool:
    """Nothing is spendable; bare "insufficient credits" counts unless it is about this request."""
    if _BALANCE.search(text) or _ZAI_BILLING_CODE.search(text):
        return True
    return bool(_BARE_CREDITS.search(text)) and not _AFFORDABILITY.search(text)


def kind_from_wording(text: str) -> FailureKind | None:
    """The kind the words name, most specific first; an exhausted balance wins over a
    request the credit cannot cover, so the two are never both claimed."""
    if PLAN_EXCLUDES_MODEL.search(text):
        return "billing"
    if names_model_error(text):
        return "model_error"
    if _CONTENT_BLOCK.search(text):
        return "content_blocked"
    if names_exhausted_balance(text):
        return "balance_exhausted"
    if _AFFORDABILITY.search(text):
        return "credit_limit"
    if _CONTEXT_LENGTH.search(text):
        return "context_length"
    if INVALID_KEY.search(text):
        return "invalid_key"
    return None
