"""The generation turn: a member's question answered through their credential route,
with model fallback and key rotation (see `bot.turn.runner`)."""

from bot.turn.attempts import Attempt, AttemptPlan, AttemptRecord
from bot.turn.context import TurnContext
from bot.turn.credentials import (
    Credentials,
    DatabaseCredentials,
    EnvironmentCredentials,
    Leg,
    TurnRoute,
)
from bot.turn.policy import Step, plan_next
from bot.turn.runner import TurnOutcome, run_generation_turn

__all__ = [
    "Attempt", "AttemptPlan", "AttemptRecord", "Credentials", "DatabaseCredentials", "EnvironmentCredentials",
    "Leg", "Step", "TurnContext", "TurnOutcome", "TurnRoute", "plan_next", "run_generation_turn",
]
