"""Reading untrusted files in processes the bot can kill.

Word, Excel, PDF and page extraction are pure-Python parsing of whatever a member sends:
a small hostile file can run for hours or grow to gigabytes, and a thread doing it can be
neither stopped nor kept off the event loop's GIL. Each reader runs in a child process
(`bot.readers.child`) of a small pool (`bot.readers.pool`): a document past its deadline
has its child killed and replaced, a child past its memory cap fails that document alone,
and a question that waits too long for a free child is told the reader was busy.

Nothing is imported here: the forkserver and every child import `bot.readers.child` alone.
"""
