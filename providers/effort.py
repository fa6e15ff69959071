"""A reasoning effort word for a token budget: how much a model may think, in either currency.

A server asks for reasoning as an effort word (`/model params reasoning`) or, through the
request, as a token budget. A model that takes only one of the two is asked in the
currency it takes: each family keeps its own budget per effort word (what the provider
documents or recommends), and a budget becomes the smallest effort whose budget holds it.
"""

from __future__ import annotations

from collections.abc import Mapping

# Budgets where a family documents none of its own (Claude's thinking guide's levels).
DEFAULT_BUDGETS: Mapping[str, int] = {"low": 2048, "medium": 8192, "high": 16384}


def effort_for_budget(budget: int, budgets: Mapping[str, int] = DEFAULT_BUDGETS) -> str:
    """The smallest effort word whose budget holds `budget` ("high" past them all)."""
    return next((effort for effort, most in budgets.items() if budget <= most), "high")
