"""The solver on the server: winnable dailies, proven dead ends (``lost``), solutions after a game."""
