"""Leaderboards keyed on game codes: counting results, reading boards, live pushes."""
