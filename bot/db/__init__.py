"""Persistence: SQLAlchemy 2 async models, engine set-up and migrations."""
