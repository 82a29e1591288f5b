"""A player's home: statistics, history and replays of finished games."""
