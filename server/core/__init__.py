"""Core: live games (the one writer of game state) and the fan-out hub, below every feature."""
