"""Catch-up: `/catchup` summarizes the channel's recent messages for the member who asks.

The command (`commands.py`) reads the channel's last messages (`reading.py`: up to 200,
oldest first, the bot's own answers labelled, system messages left out) once the caller's
access and their right to read the history are checked, and hands a question to the same
flow as a mention (`bot.question.flow.Answering`): limits, usage, route, keys and
fallbacks apply as to any answer. Its `Delivery` (`delivery.py`) answers through the
interaction: ephemeral by default (its webhook, streaming by edits), or in the channel.

Seams it fills (`bot.question.seams`, in `capability.py`): **join** — only a catch-up's
answer; **prepare** — the command's turn becomes the numbered messages, framed as data
(`transcript.py`); **after** — under the answer, the jump links of the messages it cited
by number (only messages read: the model never writes a link) and how many older
messages did not fit.
"""
