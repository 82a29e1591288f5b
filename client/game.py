"""A game seen through the client: its latest state, and actions that carry the right seq.

The handle is kept current by the client (replies, pushed updates, re-opens
after a reconnect), so a program never tracks move numbers itself.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Protocol

from client.errors import StaleError
from client.models import GameInfo, GameState, Result
from engine import Action
from engine.vocabulary import FINAL_RESULTS

ActionLike = Action | dict[str, Any] | str


class GameClient(Protocol):
    """What a handle asks of its client (``SolitaireClient`` is one), named here so that the
    handle does not import the client that holds it."""

    async def act(self, game_id: str, seq: int, action: ActionLike) -> Result: ...

    async def resign(self, game_id: str) -> GameHandle: ...

    async def open_game(self, game_id: str) -> GameHandle: ...


def to_action(action: ActionLike) -> Action:
    """An engine Action from itself, its JSON form or its text form (``"move col:3 found 1"``)."""
    if isinstance(action, Action):
        return action
    if isinstance(action, str):
        return Action.from_text(action)
    return Action.from_json(action)


class GameHandle:
    """One game a client plays or watches."""

    def __init__(self, client: GameClient, message: dict[str, Any]) -> None:
        self.client = client
        self.info = GameInfo.from_json(message["game"])
        self.state = GameState.from_json(message["state"])
        self.role: str = message["role"]
        self.last_result: Result | None = None
        self.updates: deque[Result] = deque(maxlen=256)  # pushed updates, oldest first
        self.version = 0  # bumped on every change, for waiters
        self._changed = asyncio.Event()
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"<GameHandle {self.id} {self.code} {self.state.status} seq={self.state.seq}>"

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def code(self) -> str | None:
        """The game's code; None for a daily challenge's game (sealed: named by day and family)."""
        return self.info.code

    @property
    def is_owner(self) -> bool:
        return self.role == "owner"

    @property
    def finished(self) -> bool:
        """Won, resigned or expired: nothing more can happen in it."""
        return self.info.result is not None or self.state.status in FINAL_RESULTS

    # -- actions -----------------------------------------------------------------

    async def act(self, action: ActionLike) -> Result:
        """Send one action with the current seq; on ``stale`` the handle resyncs, then raises."""
        parsed = to_action(action)
        async with self._lock:
            try:
                result = await self.client.act(self.id, self.state.seq, parsed)
            except StaleError as exc:
                if exc.state is not None:
                    self._set_state(exc.state)
                raise
            self.last_result = result
            self._set_state(result.state)
            return result

    async def touch(self, at: str) -> Result:
        """Heart to Heart's touch model: ``heart:N``, ``waste`` or ``stock``."""
        return await self.act(Action("touch", (at,)))

    async def pair(self, a: str, b: str) -> Result:
        return await self.act(Action("pair", (a, b)))

    async def draw(self) -> Result:
        return await self.act(Action("draw"))

    async def tap(self, at: str) -> Result:
        """Seahaven: send the card at ``col:N``/``cell:N`` to its foundation."""
        return await self.act(Action("tap", (at,)))

    async def double_tap(self, at: str, count: int = 1) -> Result:
        return await self.act(Action("double_tap", (at, count)))

    async def move(self, source: str, target: str, count: int = 1) -> Result:
        return await self.act(Action("move", (source, target, count)))

    async def undo(self) -> Result:
        return await self.act(Action("undo"))

    async def resign(self) -> GameHandle:
        return await self.client.resign(self.id)

    async def refresh(self) -> GameHandle:
        """Reload info and state from the server (``open_game``)."""
        return await self.client.open_game(self.id)

    # -- waiting for others' changes ----------------------------------------------------

    async def wait_change(self, since: int, timeout: float | None = None) -> int:
        """Wait until ``version`` passes ``since``; returns the new version."""
        while self.version <= since:
            await asyncio.wait_for(self._changed.wait(), timeout)
        return self.version

    # -- fed by the client ---------------------------------------------------------

    def take_game(self, message: dict[str, Any], role: str | None = None) -> None:
        """A ``game`` message (a reply, or a push when the game ends without an action)."""
        self.info = GameInfo.from_json(message["game"])
        if role is not None:
            self.role = role
        self._set_state(GameState.from_json(message["state"]), force=True)

    def take_update(self, message: dict[str, Any]) -> None:
        """An ``update`` push; one whose state is not newer than ours (a repeat) is dropped."""
        update = Result.from_json(message)
        if update.state.seq <= self.state.seq:
            return
        self.updates.append(update)
        self._set_state(update.state)

    def _set_state(self, state: GameState, force: bool = False) -> None:
        if force or state.seq >= self.state.seq:
            self.state = state
            self.version += 1
            changed, self._changed = self._changed, asyncio.Event()
            changed.set()
