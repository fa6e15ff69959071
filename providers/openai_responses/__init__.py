"""OpenAI on the Responses API (`POST /v1/responses`), through the official SDK.

Importing the package imports no SDK: `providers.adapter.create_adapter` imports the
adapter when a request is made, so an idle bot never loads it.
"""
