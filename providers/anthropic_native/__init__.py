"""Anthropic adapter (Messages API over the anthropic SDK, raw event stream)."""

from providers.anthropic_native.adapter import AnthropicAdapter, create
from providers.anthropic_native.events import AnthropicStream, process_event
from providers.anthropic_native.request import build_arguments

__all__ = ["AnthropicAdapter", "AnthropicStream", "build_arguments", "create", "process_event"]
