"""Built-in tools the model may call during a turn, and the loop that runs them."""

from bot.tools.builtin import default_registry
from bot.tools.loop import ToolLoop, execute_calls
from bot.tools.registry import Tool, ToolContext, ToolRegistry

__all__ = ["Tool", "ToolContext", "ToolLoop", "ToolRegistry", "default_registry", "execute_calls"]
