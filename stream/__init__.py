"""Provider-agnostic driving of one stream into a message sink. Never imports `bot`."""
