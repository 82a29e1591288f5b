"""Cheat signals: think time from the server's timestamps, the solver's comparison, flags."""
