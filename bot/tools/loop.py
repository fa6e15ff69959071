"""The tool loop: run the model's calls, feed the results back, stream again.

Every call gets exactly one tool message (JSON), so each provider can pair results with
calls. A call whose arguments the provider cut off is never dispatched: its arguments
are only a repair's guess. The loop is bounded by iterations and by consecutive failed
calls; past a bound the model is asked once more without tools (a model that needs the
tool list to read tool history, `ModelCapabilities.tool_history_needs_tools`, ends with a
notice instead). Follow-up responses stream
into the same delivery, so the reader sees one answer; a follow-up's failure is returned
for the turn to show in place, never retried on another key, since the answer has begun.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from bot.tools.registry import ToolContext, ToolError, ToolRegistry
from bot.usage.tokens import add_usage
from providers import ChatRequest, Message, normalized_stream
from providers.log_safe import loggable
from providers.types import FunctionCall
from stream.buffer import MessageDelivery
from stream.interrupt import Interrupt
from stream.limits import StreamLimits
from stream.orchestrator import DEFAULT_LIMITS, StreamResult, ending_of, run_stream

log = logging.getLogger(__name__)

MAX_ITERATIONS = 5
MAX_CONSECUTIVE_ERRORS = 3
TOOL_TIMEOUT = 10.0


@dataclass(frozen=True)
class CallResult:
    call: FunctionCall
    content: str  # JSON text for the model
    ok: bool


def _error(kind: str, message: str, **extra: Any) -> str:
    return json.dumps({"error": {"type": kind, "message": message, **extra}}, ensure_ascii=False)


async def execute_call(call: FunctionCall, registry: ToolRegistry, context: ToolContext,
                       timeout: float = TOOL_TIMEOUT) -> CallResult:
    """Run one call; every failure becomes a model-visible JSON error, never an exception."""
    if call.arguments_truncated:
        log.error("tool call %s refused: its arguments were truncated by the provider", loggable(call.name))
        return CallResult(call, _error("tool_execution_failed",
                                       "the arguments of this call were truncated (cut off); "
                                       "it was not run. Call it again with complete arguments."), False)
    tool = registry.get(call.name)
    if tool is None:
        return CallResult(call, _error("unknown_tool", f"no tool named {call.name!r}",
                                       available_tools=registry.names()), False)
    try:
        args = tool.arguments.model_validate(call.args or {})
    except ValidationError as exc:
        problems = [f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()]
        return CallResult(call, _error("invalid_arguments", "; ".join(problems)), False)
    timeout = tool.timeout or timeout
    try:
        value = await asyncio.wait_for(tool.run(args, context), timeout)
    except ToolError as exc:
        return CallResult(call, _error("tool_error", str(exc)), False)
    except TimeoutError:
        log.warning("tool %s timed out after %ss", loggable(call.name), timeout)
        return CallResult(call, _error("tool_execution_failed", f"the tool took longer than {timeout:g}s"), False)
    except Exception:  # noqa: BLE001 - a tool bug is the model's problem to route around, not the turn's
        log.exception("tool %s failed", loggable(call.name))
        return CallResult(call, _error("tool_execution_failed", "the tool failed unexpectedly"), False)
    return CallResult(call, json.dumps({"result": value}, ensure_ascii=False, default=str), True)


async def execute_calls(calls: Sequence[FunctionCall], registry: ToolRegistry, context: ToolContext,
                        timeout: float = TOOL_TIMEOUT) -> list[CallResult]:
    """Run the calls in the order the model made them."""
    return [await execute_call(call, registry, context, timeout) for call in calls]


def history_for(text: str, results: Sequence[CallResult]) -> list[Message]:
    """The assistant turn that called the tools, then one tool message per call."""
    calls = [r.call for r in results]
    return [Message("assistant", text, tool_calls=calls),
            *(Message("tool", r.content, tool_call_id=r.call.id, name=r.call.name) for r in results)]


@dataclass
class ToolLoop:
    """Per-turn tool loop; `with_tools` declares the tools on the turn's request."""

    registry: ToolRegistry
    context: ToolContext = dataclasses.field(default_factory=ToolContext)
    max_iterations: int = MAX_ITERATIONS
    max_consecutive_errors: int = MAX_CONSECUTIVE_ERRORS
    timeout: float = TOOL_TIMEOUT

    def with_tools(self, request: ChatRequest) -> ChatRequest:
        return dataclasses.replace(request, tools=self.registry.specs())

    async def run(self, adapter: Any, request: ChatRequest, result: StreamResult, delivery: MessageDelivery,
                  interrupt: Interrupt, limits: StreamLimits = DEFAULT_LIMITS) -> StreamResult:
        """Continue a `function_call` result until the model answers (see the module docstring)."""
        messages = list(request.messages)
        usage = result.usage  # every response is paid for: the answer's usage is their sum
        iterations = errors = 0
        shown = 0  # characters of the delivery before the current response
        tools_offered = True
        while result.status == "function_call" and tools_offered:
            if interrupt.is_set():  # asked to stop between responses
                await delivery.finish(ending=ending_of(result, interrupt.reason))
                result.status, result.interrupted = "interrupted", interrupt.reason
                return result
            iterations += 1
            results = await execute_calls(result.function_calls, self.registry, self.context, self.timeout)
            for r in results:
                errors = 0 if r.ok else errors + 1
            messages += history_for(result.text[shown:], results)
            shown = len(result.text)
            bounded = iterations >= self.max_iterations or errors >= self.max_consecutive_errors
            if bounded:
                log.warning("tool loop bounded after %d iterations (%d consecutive errors)", iterations, errors)
                if adapter.capabilities.tool_history_needs_tools:  # no ask without tools possible
                    break
                tools_offered = False
            follow = dataclasses.replace(request, messages=list(messages),
                                         tools=request.tools if tools_offered else ())
            earlier = result
            result = await run_stream(normalized_stream(adapter, follow), delivery, interrupt,
                                      keep_open_for_calls=tools_offered, limits=limits, provider=adapter.provider)
            usage = result.usage = add_usage(usage, result.usage)
            # The answer's, in order: what each response searched, cited and reasoned (the
            # reasoning that led to a call is the first the Reasoning button and the log show).
            result.sources[:0], result.searches[:0] = earlier.sources, earlier.searches
            result.thoughts[:0], result.captured_blocks[:0] = earlier.thoughts, earlier.captured_blocks
            result.thoughts_cut = result.thoughts_cut or earlier.thoughts_cut
        if result.status == "function_call":  # bounded and the model still wants tools: the
            await delivery.finish(ending=ending_of(result))  # turn says so (a `function_call` result after the loop)
        return result
