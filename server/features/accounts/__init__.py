"""Accounts on top of guests: a username and a password for a player, sessions on many devices."""
