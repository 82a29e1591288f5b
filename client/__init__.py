"""Python client for the solitaire server: library, ``solitaire`` CLI and a bot example.

    import asyncio
    from client import SolitaireClient

    async def main() -> None:
        me = await SolitaireClient.create_player("http://127.0.0.1:8000", "Ada")
        async with SolitaireClient("http://127.0.0.1:8000", me.token) as client:
            game = await client.new_game("HH1-N-AAAAAAM")
            await game.touch("heart:25")
            print(game.state.score, game.state.status)

    asyncio.run(main())

See docs/clients.md. Everything here speaks the public protocol only
(docs/protocol.md), so it doubles as a reference client for other languages.
"""

from client.competition import LeaderboardFeed, RaceHandle
from client.core import SolitaireClient
from client.deals import Deal, deal
from client.errors import (
    AuthError,
    BadCodeError,
    ConflictError,
    ConnectionLostError,
    ForbiddenError,
    GameOverError,
    IllegalActionError,
    NotFoundError,
    RateLimitedError,
    RequestError,
    ServerError,
    SolitaireError,
    StaleError,
)
from client.game import GameHandle
from client.http import HttpApi
from client.models import Credentials, GameInfo, GameState, Outcome, Player, Result
from client.verify import verify_game

__all__ = [
    "AuthError",
    "BadCodeError",
    "ConflictError",
    "ConnectionLostError",
    "Credentials",
    "Deal",
    "ForbiddenError",
    "GameHandle",
    "GameInfo",
    "GameOverError",
    "GameState",
    "HttpApi",
    "IllegalActionError",
    "LeaderboardFeed",
    "NotFoundError",
    "Outcome",
    "Player",
    "RaceHandle",
    "RateLimitedError",
    "RequestError",
    "Result",
    "ServerError",
    "SolitaireClient",
    "SolitaireError",
    "StaleError",
    "deal",
    "verify_game",
]
