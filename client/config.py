"""The CLI's configuration file: which server, and each server's player token.

Tokens are kept per server because a token only means something to the
server (and database) that issued it. The file is written with mode 600:
the token is the player's whole identity.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from client.http import DEFAULT_SERVER, normalize_server


def config_path(explicit: str | None = None) -> Path:
    """--config, else $SOLITAIRE_CONFIG, else ~/.config/solitaire/config.json."""
    chosen = explicit or os.environ.get("SOLITAIRE_CONFIG")
    if chosen:
        return Path(chosen).expanduser()
    return Path.home() / ".config" / "solitaire" / "config.json"


class Config:
    """The loaded file; ``save`` writes it back atomically."""

    def __init__(self, path: Path, data: dict[str, Any] | None = None) -> None:
        self.path = path
        self.data: dict[str, Any] = data or {}

    @classmethod
    def load(cls, path: Path) -> Config:
        if not path.exists():
            return cls(path)
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
        return cls(path, data if isinstance(data, dict) else {})

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_suffix(".tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(self.data, handle, indent=2)
            handle.write("\n")
        os.replace(temp, self.path)

    def server(self, explicit: str | None = None) -> str:
        """--server, else $SOLITAIRE_SERVER, else the file's, else the local default."""
        chosen = explicit or os.environ.get("SOLITAIRE_SERVER") or self.data.get("server") or DEFAULT_SERVER
        return normalize_server(str(chosen))

    def account(self, server: str) -> dict[str, str] | None:
        found = self.data.get("players", {}).get(normalize_server(server))
        return dict(found) if isinstance(found, dict) else None

    def set_account(self, server: str, player_id: str, name: str, token: str) -> None:
        players = self.data.setdefault("players", {})
        players[normalize_server(server)] = {"id": player_id, "name": name, "token": token}

    def set_username(self, server: str, username: str) -> None:
        found = self.data.setdefault("players", {}).get(normalize_server(server))
        if isinstance(found, dict):
            found["username"] = username

    def forget_account(self, server: str) -> None:
        """After logging out: the token no longer works, so it is not kept."""
        self.data.get("players", {}).pop(normalize_server(server), None)
