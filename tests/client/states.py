"""Game states for the client's drawing tests, as the server would send them."""

from __future__ import annotations

from client.models import GameState


def heart_state(waste_top: str | None = None, stock_count: int = 0) -> GameState:
    """A Heart to Heart state with every heart position free; a waste card when ``waste_top``."""
    return GameState.from_json(
        {
            "code": "HH1-N-AAAAAC5",
            "game": "HH",
            "variant": "N",
            "status": "playing",
            "score": 0,
            "moves": 0,
            "seq": 0,
            "undo_depth": 0,
            "progress": 0,
            "progress_total": 25,
            "elapsed_ms": 0,
            "clock_running": False,
            "board": {
                "heart": [{"pos": p, "card": "AS", "free": True} for p in range(1, 26)],
                "selection": None,
                "waste_top": waste_top,
                "stock_count": stock_count,
                "waste_count": 0 if waste_top is None else 1,
            },
            "hints": {},
            "fingerprint": "0" * 16,
        }
    )
