"""Anthropic adapter (Messages API over the anthropic SDK, raw event stream).

Importing the package imports no SDK: `providers.adapter.create_adapter` imports
`providers.anthropic_native.adapter` when a request is made, so an idle bot never loads it.
"""
