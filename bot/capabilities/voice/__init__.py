"""Voice: a Discord voice message (message flag IS_VOICE_MESSAGE, one `audio/ogg` attachment
with `duration_secs` and `waveform`) is a question like any other.

It addresses the bot as any message does (`bot.question.conversation.addresses_bot`): in a
DM always; in a server as a reply to the bot (Discord's voice messages carry no text, so
no mention, but a reply — pinging or not — is one), in a bot thread or a listen channel.
The recording is read where every attachment is (`bot.capabilities.reading.attachments`,
which asks `audio.py` for the bounds and the Ogg check), and becomes an `AudioPart`.

Seams it fills (`bot.question.seams`, in `capability.py`): **join** — a question whose
message, or an earlier message of its conversation, is a voice message; **wait** — a
question that is only a voice message past the bounds, or where the operator set up no
voice at all (no transcription route, no model of the route hears audio), ends with a
one-line note; **prepare** — earlier voice messages whose transcript is kept become their
words (`storage.py`); **for_attempt** — a model that hears `audio/ogg`
(`ModelCapabilities.audio`: Gemini) gets the audio, any other the transcript
(`transcripts.py`, the route in `route.py`, the SDK call in `providers.transcription`),
shown in a small quote line above the answer (`notes.py`); **books** — each transcript
kept, with its seconds (the usage of the transcription route).

Modules: `environment.py` (the operator's settings), `audio.py` (pure: bounds, the Ogg
check), `route.py`, `transcripts.py`, `notes.py`, `storage.py`, `member_data.py`,
`capability.py`.
"""
