"""Web search: the model reaches the open web, natively or through the bot's tool."""
