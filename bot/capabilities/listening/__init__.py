"""Listening: channels where every member message is a question, and back-to-back
messages answered as one.

`storage.py` keeps the listen channels and their gaps; `gaps.py` starts a listen
channel's answers at least its gap apart; `batching.py` lets a member's quick follow-up
join their question.

Seams it fills (`bot.question.seams`): **wait** — a listen channel's gap before the
answer takes its turn (`capability.py`).
"""
