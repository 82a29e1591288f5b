"""A greedy bot that plays today's daily challenge to a finished game, through the public protocol only.

    python client/examples/bot.py --server http://127.0.0.1:8000 --daily SH1-C4

Heart to Heart: pairs first (two heart cards, then a heart card and the
waste), else draw. Seahaven: taps home first, else a double tap on each
movable card or run. A position already seen, or a dead end (stalemate,
stuck), is undone; when nothing new is left it backs up. It resigns when its
move budget is spent or nothing is left to try, so it always ends with a
finished game.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from client import GameHandle, GameState, IllegalActionError, SolitaireClient


def heart_choices(state: GameState) -> list[str]:
    by_rank: dict[str, list[str]] = {}
    for place in state.board["heart"]:
        if place["free"]:
            by_rank.setdefault(place["card"][0], []).append(f"heart:{place['pos']}")
    pairs = [f"pair {locs[0]} {locs[1]}" for locs in by_rank.values() if len(locs) > 1]
    top = state.board["waste_top"]
    pairs += [f"pair {by_rank[top[0]][0]} waste"] if top and top[0] in by_rank else []
    return [*pairs, "draw"]


def tower_choices(state: GameState) -> list[str]:
    hints = state.hints
    taps = [f"tap {at}" for at in hints["tappable"]]
    runs = [f"double_tap {at} {hints['runs'][at]}" for at in hints["movable"] if at in hints["runs"]]
    singles = [f"double_tap {at} 1" for at in hints["movable"]]
    return list(dict.fromkeys([*taps, *runs, *singles]))


def position(state: GameState) -> str:
    """What the bot considers the same position (the board; score and moves aside)."""
    return json.dumps(state.board, sort_keys=True)


async def play(game: GameHandle, budget: int) -> None:
    """Depth-first with undo: a repeated or dead position is undone, a spent one backtracked."""
    seen = {position(game.state)}
    tried: set[tuple[str, str]] = set()
    choose = heart_choices if game.state.game == "HH" else tower_choices
    while not game.finished and game.state.moves < budget:
        here = position(game.state)
        fresh = [a for a in choose(game.state) if (here, a) not in tried]
        if not fresh:
            if not game.state.undo_depth:
                break
            await game.undo()  # nothing new here: back up one move
            continue
        tried.add((here, fresh[0]))
        try:
            await game.act(fresh[0])
        except IllegalActionError:
            continue
        dead = game.state.status in ("stalemate", "stuck")
        if not game.finished and (dead or position(game.state) in seen):
            await game.undo()
        seen.add(position(game.state))
    if not game.finished:
        await game.resign()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000")
    parser.add_argument("--token", help="a player token (default: a new player named Bot)")
    parser.add_argument("--daily", default="HH1-N", help="HH1-N, SH1-C4, SH1-C2 or SH1-C1")
    parser.add_argument("--code", help="play this code instead of the daily challenge")
    parser.add_argument("--budget", type=int, default=200, help="resign after this many moves")
    args = parser.parse_args()
    token = args.token
    if token is None:  # a program says it is one: it ranks on the bots' boards, never among people
        me = await SolitaireClient.create_player(args.server, "Bot", bot=True)
        print(f"created player {me.id} (a bot)", flush=True)
        token = me.token
    async with SolitaireClient(args.server, token) as client:
        game = await (client.new_game(args.code) if args.code else client.new_game(daily=args.daily))
        named = game.code or f"the {game.info.family} daily of {game.info.daily}"  # a daily is sealed
        print(f"playing {named} as game {game.id}", flush=True)
        await play(game, args.budget)
        state = game.state
        print(
            f"finished: {game.info.result or state.status} score {state.score} moves {state.moves} "
            f"progress {state.progress}/{state.progress_total} game {game.id}"
        )


if __name__ == "__main__":
    asyncio.run(main())
