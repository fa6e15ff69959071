"""The bot's capabilities, one package each: what a capability adds to an answer and the
per-server settings it declares (`bot.capabilities.declared`)."""
