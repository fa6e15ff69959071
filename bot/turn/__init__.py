"""The generation turn (spec §7): credential route, model fallback x key rotation."""

from bot.turn.credentials import (
    Credentials,
    DatabaseCredentials,
    EnvironmentCredentials,
    Leg,
    TurnRoute,
)
from bot.turn.policy import Step, error_scope, plan_next, retry_after_seconds
from bot.turn.runner import Attempt, TurnOutcome, run_generation_turn

__all__ = [
    "Attempt", "Credentials", "DatabaseCredentials", "EnvironmentCredentials", "Leg", "Step",
    "TurnOutcome", "TurnRoute", "error_scope", "plan_next", "retry_after_seconds",
    "run_generation_turn",
]
