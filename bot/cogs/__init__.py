"""discord.py cogs, loaded by module path from bot.app.COG_MODULES."""
