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

from client.competition import GhostRaceHandle, LeaderboardFeed, RaceHandle
from client.core import SolitaireClient
from client.deals import Deal, deal
from client.errors import (
    AuthError,
    BadCodeError,
    BadCredentialsError,
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
from client.models import (
    Account,
    Credentials,
    DailyStats,
    GameInfo,
    GameState,
    GameStats,
    HistoryGame,
    HistoryPage,
    LoggedIn,
    Outcome,
    Player,
    PlayerStats,
    Replay,
    ReplayStep,
    Result,
    Session,
    VariantStats,
)
from client.verify import verify_game

__all__ = [
    "Account",
    "AuthError",
    "BadCodeError",
    "BadCredentialsError",
    "ConflictError",
    "ConnectionLostError",
    "Credentials",
    "DailyStats",
    "Deal",
    "ForbiddenError",
    "GameHandle",
    "GameInfo",
    "GameOverError",
    "GameState",
    "GameStats",
    "GhostRaceHandle",
    "HistoryGame",
    "HistoryPage",
    "HttpApi",
    "IllegalActionError",
    "LeaderboardFeed",
    "LoggedIn",
    "NotFoundError",
    "Outcome",
    "Player",
    "PlayerStats",
    "RaceHandle",
    "RateLimitedError",
    "Replay",
    "ReplayStep",
    "RequestError",
    "Result",
    "ServerError",
    "Session",
    "SolitaireClient",
    "SolitaireError",
    "StaleError",
    "VariantStats",
    "deal",
    "verify_game",
]
