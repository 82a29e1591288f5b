"""Text for the terminal: tables, counted nouns, times, and what a move just did."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from client.render import Style, clock


def table(columns: tuple[str, ...], rows: Sequence[tuple[str, ...]], left: int = 1) -> list[str]:
    """Every column labelled, each as wide as its widest cell; the first ``left`` columns
    aligned left (names, codes), the rest right (numbers)."""
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(columns)]

    def line(cells: tuple[str, ...]) -> str:
        out = [
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(out).rstrip()

    return [line(columns), *(line(r) for r in rows)]


def plural(count: int, word: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def day_and_time(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def or_dash(value: object) -> str:
    return "-" if value is None else str(value)


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.0f}%"


def duration(ms: int | None) -> str:
    return "-" if ms is None else clock(ms)


def progress_of(racer: dict[str, Any]) -> str:
    return f"{racer['progress']}/{racer['progress_total']}"


def describe_events(events: list[dict[str, Any]], reason: str | None, style: Style) -> list[str]:
    """Short lines for what just happened."""
    lines = [reason] if reason else []
    for event in events:
        kind = event["kind"]
        if kind == "pair":
            cards = " + ".join(style.card(c["card"]) for c in event["cards"])
            lines.append(f"pair {cards}: +{event['points']}")
        elif kind == "move":
            cards = " ".join(style.card(c) for c in event["cards"])
            points = f" +{event['points']}" if event["points"] else ""
            lines.append(f"{cards}: {event['from']} -> {event['to']}{points}")
        elif kind in ("draw", "select"):
            lines.append(f"{kind} {style.card(event['card'])}")
        elif kind == "won":
            lines.append("You won!")
        elif kind in ("stalemate", "undo", "redeal", "deselect"):
            lines.append(event.get("message") or kind)
    return lines
