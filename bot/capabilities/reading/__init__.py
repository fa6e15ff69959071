"""Reading: what a question carries, made readable for the model.

Attached files (`attachments.py`, `attachment_files.py`), images decoded off the event
loop (`images.py`), Word, Excel and PDF files read in the reader processes
(`documents.py`, `office_files.py`, `word_text.py`, `workbook_parts.py`, `ooxml.py`,
`pdf_files.py`), and the links a question names (`links/` fetches them behind the custom
endpoints' address rules; `linked.py` frames them for the model).

Seams it fills (`bot.question.seams`, in `capability.py`): **join** — a question with
text, where neither the operator (READ_LINKS) nor the server turned link reading off;
**prepare** — the question's links read and added to its turn, with a note for the
member when one could not be read.
The question's own files are read where the request is built
(`bot.question.conversation.build_request`), for every message of the conversation alike.
"""
