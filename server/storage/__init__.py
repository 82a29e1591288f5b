"""Persistence through SQLAlchemy 2 async; the schema comes only from Alembic migrations."""
