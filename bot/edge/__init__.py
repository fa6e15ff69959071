"""The Discord edge: sending and editing messages within Discord's limits, the bot's URLs, invite and translations."""
