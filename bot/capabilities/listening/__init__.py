"""Listening: how the bot follows a conversation (history, threads, listen channels, batching)."""
