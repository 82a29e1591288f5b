"""Moderation: operators' tokens, reviewing flagged results, bans, renames, the audit log."""
