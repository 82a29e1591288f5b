"""Moderation, pure: what a review decision does to an entry, and the shapes the API shows."""

from __future__ import annotations

import json
from typing import Any

from server.rules.disclosure import shown_code
from server.vocabulary import AuditAction
from wire import Standing

REVIEWS: dict[str, tuple[Standing, AuditAction]] = {
    "confirm": (Standing.CONFIRMED, AuditAction.CONFIRM_FLAG),
    "clear": (Standing.CLEARED, AuditAction.CLEAR_FLAG),
    "remove": (Standing.REMOVED, AuditAction.REMOVE_ENTRY),
}
MAX_REASON = 500


def flagged_json(row: Any, now_ms: int) -> dict[str, Any]:
    """A flagged result with its player and every signal the server recorded; a daily's named by
    day and family while its day lasts (operators included: the code is the deal)."""
    return {
        "game_id": row.game_id,
        "code": shown_code(row.code, row.daily_day, now_ms),
        "daily": row.daily_day,
        "family": row.code.rsplit("-", 1)[0],
        "player": {"id": row.player_id, "name": row.name},
        "kind": row.kind,
        "standing": row.standing,
        "won": bool(row.won),
        "moves": row.moves,
        "elapsed_ms": row.elapsed_ms,
        "finished_at": row.finished_ms,
        "signals": {
            "reasons": [r for r in (row.s_reasons or "").split(",") if r],
            "actions": row.s_actions,
            "median_gap_ms": row.s_median_gap_ms,
            "min_gap_ms": row.s_min_gap_ms,
            "gap_spread_ms": row.s_gap_spread_ms,
            "undos": row.s_undos,
            "solver_length": row.s_solver_length,
            "extra_moves": row.s_extra_moves,
            "solver_line": row.s_solver_line,
            "analysed_at": row.s_analysed_ms,
            "evidence": json.loads(row.s_evidence) if row.s_evidence else None,
        },
    }


def audit_json(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "at": row.at_ms,
        "admin": {"id": row.admin_id, "name": row.admin_name},
        "action": row.action,
        "target": row.target,
        "reason": row.reason,
        "details": row.details,
    }


def token_state(row: Any, now_ms: int) -> str:
    """``active``, ``expired`` or ``revoked``: whether /api/admin accepts the token now."""
    if row.revoked_ms is not None:
        return "revoked"
    if row.expires_ms is not None and row.expires_ms <= now_ms:
        return "expired"
    return "active"


def token_json(row: Any, now_ms: int) -> dict[str, Any]:
    """An operator token as ``admin tokens list`` shows it: never the token, never its hash."""
    return {
        "id": row.id,
        "name": row.name,
        "created_at": row.created_ms,
        "expires_at": row.expires_ms,
        "revoked_at": row.revoked_ms,
        "state": token_state(row, now_ms),
    }
