"""Answer controls: the buttons under an answer and what they need later.

Stop rides on the message an answer streams into, Regenerate, Continue, Reasoning and
Sources on the last part of an ended answer (`buttons.py`); a press — also after a
restart — is handled by `commands.py`; Regenerate and Continue rebuild the question from
its messages (`again.py`).

Seams it fills (`bot.question.seams`, in `capability.py`): **join** — every answer;
**prepare** — which earlier answer the question continues; **books** — which messages
make the answer and what its buttons need (`records.py`), written through the batched
writes and kept in the process for replies that arrive before the batch is written.

The buttons themselves ride on the writes the answer makes anyway: the chat flow hands
the sink its `AnswerControls`.
"""
