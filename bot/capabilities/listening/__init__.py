"""Listening: channels where every member message is a question, and back-to-back
messages answered as one.

`storage.py` keeps the listen channels and their gaps; `gaps.py` starts a listen
channel's answers at least its gap apart; `batching.py` lets a member's quick follow-up
join their question.

Seams it fills (`bot.question.seams`, in `capability.py`): **join** — a question written
in a listen channel; **wait** — the channel's gap before the answer takes its turn.
Where a message becomes a question (`bot.question.flow.Answering.question_of`) and whether
it joins a member's earlier one (admission) use `storage.py` and `batching.py` directly:
they decide whether there is an answer to join at all.
"""
