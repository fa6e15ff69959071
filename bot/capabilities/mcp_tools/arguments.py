"""A server tool's arguments checked against its own input schema before it runs.

The model's arguments are held to the JSON Schema the server published (`jsonschema`,
the reference validator, pinned; imported on first use so a bot without MCP servers
never loads it). A mismatch fails pydantic validation, which the tool loop answers to
the model as `invalid_arguments`: the tool is never run with them. A server whose schema
is itself not a valid JSON Schema has that tool left out (`usable_schema`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_PROBLEMS = 5


class ServerArguments(BaseModel):
    """The arguments as the model sent them, once they matched the schema."""

    model_config = ConfigDict(frozen=True)
    values: dict[str, Any] = Field(default_factory=dict)


def usable_schema(schema: Any) -> bool:
    """Whether `schema` is an object schema jsonschema accepts."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return False
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError:
        return False
    return True


def arguments_for(schema: dict[str, Any]) -> type[ServerArguments]:
    """A ServerArguments whose validation holds the arguments to `schema`."""
    from jsonschema.validators import validator_for

    validator = validator_for(schema)(schema)

    class Checked(ServerArguments):
        @model_validator(mode="before")
        @classmethod
        def _matches(cls, data: Any) -> Any:
            problems = [_problem(error) for error in validator.iter_errors(data)][:MAX_PROBLEMS]
            if problems:
                raise ValueError("; ".join(problems))
            return {"values": data}

    return Checked


def _problem(error: Any) -> str:
    """One schema mismatch as the model reads it: where, then what (bounded)."""
    where = ".".join(str(part) for part in error.absolute_path) or "arguments"
    return f"{where}: {error.message[:200]}"
