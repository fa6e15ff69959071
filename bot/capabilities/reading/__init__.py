"""Reading: what a question carries beyond its text (attachments, documents, links)."""
