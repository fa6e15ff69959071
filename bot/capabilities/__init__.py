"""The bot's capabilities: each one package that joins an answer at named seams.

A capability is what a member or a manager would call a feature — web search, reading
what a question carries, the buttons under answers, listen channels. Its package holds
its code, its storage and its commands; where it joins an answer is named in
`bot.question.seams` (admit, prepare, each attempt, after, books). The chat cog
(`bot.cogs.chat`) says which capabilities this bot composes.

Not to be confused with a model's capabilities (`providers.model_capabilities`): what a
provider's model can do, asked per attempt.
"""
