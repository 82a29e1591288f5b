""" "Winnable deals only": a random deal the solver proves winnable before it is dealt."""

from __future__ import annotations

import pytest

from engine import parse_code
from engine.solver import solve
from server.solver.deals import Deals
from server.solver.pool import SolverPool
from tests.support import Client, new_player


@pytest.mark.parametrize(("game", "variant"), [("HH", "N"), ("SH", "C1")])
async def test_a_winnable_deal_is_proven_before_it_is_dealt(server: str, game: str, variant: str) -> None:
    """Most Heart to Heart deals and about 98% of one-cell Seahaven deals cannot be won: every
    game asked for as winnable is one the solver wins, on a fresh random code each time."""
    client = await Client.connect(server, (await new_player(server))["token"])
    codes = set()
    for _ in range(3):
        reply = await client.request("new_game", game=game, variant=variant, winnable=True)
        assert reply["type"] == "game", reply
        code = reply["game"]["code"]
        assert code.startswith(f"{game}1-{variant}-")
        assert solve(parse_code(code), 200_000).result == "won"
        assert reply["state"]["seq"] == 0
        codes.add(code)
    assert len(codes) == 3
    resigned = await client.request("resign", game_id=reply["game"]["id"])  # Give up stays available
    assert resigned["state"]["status"] == "resigned"


async def test_winnable_goes_with_game_and_variant_only(server: str) -> None:
    client = await Client.connect(server, (await new_player(server))["token"])
    for refused in (
        await client.request("new_game", winnable=True, code="HH1-N-AAAAAAM"),
        await client.request("new_game", winnable=True, daily="HH1-N"),
    ):
        assert (refused["code"], refused["field"]) == ("bad_message", "winnable")
    wrong = await client.request("new_game", game="HH", winnable="yes")
    assert (wrong["code"], wrong["field"]) == ("bad_message", "winnable")
    plain = await client.request("new_game", game="HH", variant="N", winnable=False)
    assert plain["type"] == "game"


async def test_no_candidate_proven_means_none() -> None:
    """Unwinnable candidates only: the search gives up (the request answers unavailable)."""
    unwinnable = [
        code
        for code in (parse_code(f"SH1-C1-AAAAA{a}{b}") for a in "AB" for b in "ABCDEFGH")
        if solve(code, 20_000).result == "impossible"
    ]
    assert len(unwinnable) >= 5
    winnable = next(
        c
        for c in (parse_code(f"HH1-N-AAAAA{a}{b}") for a in "AB" for b in "ABCDEFGH")
        if solve(c, 20_000).result == "won"
    )
    pool = SolverPool()
    try:
        deals = Deals(pool)
        assert await deals.winnable_among(unwinnable) is None
        assert await deals.winnable_among([*unwinnable, winnable]) == winnable
    finally:
        await pool.close()
