"""The OpenAI chat-completions wire family (OpenRouter, DeepSeek, Z.ai and custom endpoints).

Importing the package imports no SDK: `providers.adapter.create_adapter` imports
`providers.openai_compat.adapter` when a request is made, so an idle bot never loads it.
"""
