"""The OpenAI chat-completions wire family (openai, openrouter, deepseek, zai, custom)."""

from providers.openai_compat.adapter import OpenAICompatAdapter, create
from providers.openai_compat.request import DEFAULT_BASE_URLS, FAMILY, build_request

__all__ = ["DEFAULT_BASE_URLS", "FAMILY", "OpenAICompatAdapter", "build_request", "create"]
