"""Gemini adapter (google-genai api client, raw SSE body)."""

from providers.gemini.adapter import GeminiAdapter, create
from providers.gemini.events import GeminiStream, process_payload
from providers.gemini.request import build_body

__all__ = ["GeminiAdapter", "GeminiStream", "build_body", "create", "process_payload"]
