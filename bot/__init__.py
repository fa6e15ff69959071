"""The discord.py application layer (cogs, settings, persistence, generation turn)."""
