"""Verified replays: a finished game's stored claims checked against a fresh replay of its log."""
