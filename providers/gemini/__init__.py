"""Gemini adapter (generateContent over google-genai, raw SSE stream).

Importing the package imports no SDK: `providers.adapter.create_adapter` imports
`providers.gemini.adapter` when a request is made, so an idle bot never loads it.
"""
