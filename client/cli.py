"""``solitaire``: play, watch, race, verify and look at leaderboards from a terminal.

Every command is a thin layer over the client library, so what works here
works the same for any program using :class:`client.SolitaireClient`.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from datetime import UTC, datetime
from typing import IO, Any

from client import commands
from client.competition import RaceHandle
from client.config import Config, config_path
from client.core import SolitaireClient
from client.deals import deal
from client.errors import IllegalActionError, SolitaireError
from client.game import GameHandle
from client.http import HttpApi
from client.models import GameState, Replay, ReplayStep
from client.render import Style, clock, render
from client.verify import describe, verify_game
from engine.vocabulary import Status

DESCRIPTION = (
    "Play, watch, race, replay and verify games, log in to your account and look at "
    "statistics, histories and leaderboards, from a terminal."
)
Command = Callable[["Cli"], Coroutine[Any, Any, int]]
COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    def register(fn: Command) -> Command:
        COMMANDS[name] = fn
        return fn

    return register


class Cli:
    """One invocation: parsed arguments, configuration, output style."""

    def __init__(self, args: argparse.Namespace, out: IO[str] = sys.stdout) -> None:
        self.args = args
        self.out = out
        self.config = Config.load(config_path(getattr(args, "config", None)))
        self.server = self.config.server(getattr(args, "server", None))
        self.style = Style(color=use_color(args, out), symbols=can_print("♠♥♦♣", out))
        self._trace_file: IO[str] | None = None

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    @property
    def token(self) -> str | None:
        account = self.config.account(self.server)
        return os.environ.get("SOLITAIRE_TOKEN") or (account or {}).get("token")

    def client(self, anonymous: bool = False) -> SolitaireClient:
        token = None if anonymous else self.token
        return SolitaireClient(self.server, token, trace=self._trace())

    def need_token(self) -> None:
        if not self.token:
            raise SolitaireError("no_player", f"no player for {self.server}: run `solitaire player create`")

    def _trace(self) -> Callable[[dict[str, Any]], None] | None:
        """--trace FILE: every received message as a JSON line (debugging, contract tests)."""
        path = getattr(self.args, "trace", None)
        if not path:
            return None
        if self._trace_file is None:
            self._trace_file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed in main)
        handle = self._trace_file

        def write(message: dict[str, Any]) -> None:
            handle.write(json.dumps(message) + "\n")
            handle.flush()

        return write

    def close(self) -> None:
        if self._trace_file is not None:
            self._trace_file.close()


def use_color(args: argparse.Namespace, out: IO[str]) -> bool:
    """Colour on a terminal unless --no-color or NO_COLOR (https://no-color.org); --color forces it."""
    if getattr(args, "color", None) is not None:
        return bool(args.color)
    return not os.environ.get("NO_COLOR") and out.isatty()


def can_print(text: str, out: IO[str]) -> bool:
    try:
        text.encode(getattr(out, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


async def read_line(prompt: str, out: IO[str]) -> str | None:
    """One line of input without blocking the event loop (the connection keeps living); None at EOF."""
    out.write(prompt)
    out.flush()
    line = await asyncio.to_thread(sys.stdin.readline)
    if line and not sys.stdin.isatty():  # piped input: show it, so the output reads as a session
        out.write(line if line.endswith("\n") else line + "\n")
    return line if line else None


# -- players --------------------------------------------------------------------------


@command("player create")
async def player_create(cli: Cli) -> int:
    credentials = await SolitaireClient.create_player(cli.server, cli.args.name)
    cli.config.set_account(cli.server, credentials.id, credentials.name, credentials.token)
    cli.config.save()
    cli.say(f"created player {credentials.name} ({credentials.id}) on {cli.server}")
    cli.say(f"token saved in {cli.config.path}")
    return 0


@command("player show")
async def player_show(cli: Cli) -> int:
    account = cli.config.account(cli.server)
    if account is None:
        cli.say(f"no player for {cli.server}: run `solitaire player create --name NAME`")
        return 1
    cli.say(f"{account['name']} ({account['id']}) on {cli.server}")
    return 0


@command("player rename")
async def player_rename(cli: Cli) -> int:
    cli.need_token()
    player = await HttpApi(cli.server, cli.token).rename(cli.args.name)
    account = cli.config.account(cli.server) or {}
    cli.config.set_account(cli.server, player.id, player.name, account.get("token", cli.token or ""))
    cli.config.save()
    cli.say(f"renamed to {player.name}")
    return 0


# -- playing ----------------------------------------------------------------------------


async def start_game(cli: Cli, client: SolitaireClient) -> GameHandle:
    args = cli.args
    if args.game_id:
        return await client.open_game(args.game_id)
    if args.code:
        return await client.new_game(args.code)
    game = (args.game or "").upper()
    if game not in ("HH", "SH"):
        raise SolitaireError("usage", "say which game: solitaire play HH, play SH, or --code CODE")
    if args.daily:
        family = "HH1-N" if game == "HH" else f"SH1-{(args.variant or 'C4').upper()}"
        return await client.new_game(daily=family)
    return await client.new_game(game=game, variant=args.variant.upper() if args.variant else None)


@command("play")
async def play(cli: Cli) -> int:
    cli.need_token()
    async with cli.client() as client:
        game = await start_game(cli, client)
        return await play_loop(cli, game)


async def play_loop(cli: Cli, game: GameHandle, between: Callable[[], None] | None = None) -> int:
    """Read commands until the game ends, the player quits or input ends."""
    cli.say(f"game {game.id}   (? for help, q to quit)")
    show(cli, game.state)
    while not game.finished:
        line = await read_line("> ", cli.out)
        if line is None:
            break
        try:
            parsed = commands.parse(line, game.state.game)
        except commands.CommandError as exc:
            cli.say(str(exc))
            continue
        if parsed == "quit":
            break
        await run_command(cli, game, parsed)
        if between is not None:
            between()
    return finish(cli, game)


async def run_command(cli: Cli, game: GameHandle, parsed: Any) -> None:
    if parsed == "help":
        cli.say(commands.HELP[game.state.game])
        return
    if parsed == "board":
        show(cli, game.state)
        return
    try:
        if parsed == "resign":
            answer = await read_line("resign this game? y to confirm: ", cli.out)
            if (answer or "").strip().lower() not in ("y", "yes"):
                cli.say("not resigned")
                return
            await game.resign()
        else:
            result = await game.act(parsed)
            for line in describe_events(result.outcome.events, result.outcome.reason, cli.style):
                cli.say(line)
    except IllegalActionError as exc:
        cli.say(f"refused: {exc.message} ({exc.rule})")
        return
    show(cli, game.state)
    if game.state.status in (Status.STALEMATE, Status.STUCK):
        cli.say("No more possible moves: u to undo, r to resign, q to leave the game open")


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


def show(cli: Cli, state: GameState) -> None:
    cli.say(render(state, cli.style))


def finish(cli: Cli, game: GameHandle) -> int:
    state = game.state
    if game.finished:
        cli.say(
            f"game over: {state.status}, score {state.score}, {state.moves} moves, {clock(state.elapsed_ms)}"
        )
    else:
        cli.say(f"the game stays open: solitaire play --game {game.id}")
    return 0


# -- spectating, verifying, deals ------------------------------------------------------------


@command("watch")
async def watch(cli: Cli) -> int:
    async with cli.client(anonymous=not cli.token) as client:
        game = await client.watch(cli.args.game_id)
        cli.say(f"watching {game.id} by {game.info.owner.name}")
        show(cli, game.state)
        seen, version = game.state.seq, game.version
        while not game.finished:
            version = await game.wait_change(version)
            for update in [u for u in game.updates if u.seq >= seen]:
                cli.say(f"#{update.seq} {game.info.owner.name}: {update.action.to_text()}")
                seen = update.seq + 1
            show(cli, game.state)
        cli.say(f"finished: {game.info.result or game.state.status}")
    return 0


@command("verify")
async def verify(cli: Cli) -> int:
    client = SolitaireClient(cli.server)
    verdict = await verify_game(client.http, cli.args.game_id)
    cli.say(describe(verdict))
    return 0 if verdict.ok else 1


@command("deal")
async def show_deal(cli: Cli) -> int:
    dealt = deal(cli.args.code)
    cli.say(dealt.text)
    return 0


# -- competing -------------------------------------------------------------------------------


@command("daily")
async def daily(cli: Cli) -> int:
    body = await SolitaireClient(cli.server).http.daily(cli.args.day)
    cli.say(f"daily challenges for {body['day']}" + (" (today)" if body.get("today") else ""))
    for family, code in body["codes"].items():
        cli.say(f"  {family:8} {code}")
    if body.get("today"):
        left = max(0, body["ends_at"] - body["now"]) // 60000
        cli.say(
            f"next challenges in {left // 60} h {left % 60:02d} min;  play one: solitaire play SH --daily"
        )
    return 0


@command("leaderboard")
async def leaderboard(cli: Cli) -> int:
    """A code's board; without a code, each of today's daily challenges' boards."""
    http = SolitaireClient(cli.server).http
    if cli.args.code:
        return await show_board(cli, http, cli.args.code, cli.args.limit)
    today = await http.daily()
    for family, code in today["codes"].items():
        cli.say(f"{family} daily, {today['day']}:")
        await show_board(cli, http, code, cli.args.limit)
    return 0


async def show_board(cli: Cli, http: HttpApi, code: str, limit: int) -> int:
    body = await http.leaderboard(code, limit)
    cli.say(f"leaderboard {body['code']}")
    print_entries(cli, body["entries"])
    account = cli.config.account(cli.server)
    if account is not None:
        try:
            mine = await http.rank(body["code"], account["id"], 2)
        except SolitaireError:
            return 0
        cli.say(f"your rank: {mine['rank']}")
        print_entries(cli, mine["entries"])
    return 0


BOARD_COLUMNS = ("rank", "player", "result", "moves", "time", "score")


def print_entries(cli: Cli, entries: list[dict[str, Any]]) -> None:
    if not entries:
        cli.say("  (no entries yet)")
        return
    rows = [
        (
            f"{e['rank']}.",
            e["player"]["name"],
            "won" if e["won"] else f"{e['result']} {e['progress']}",
            str(e["moves"]),
            clock(e["elapsed_ms"]),
            str(e["score"]),
        )
        for e in entries
    ]
    for line in table(BOARD_COLUMNS, rows, left=3):
        cli.say("  " + line)


@command("race open")
async def race_open(cli: Cli) -> int:
    cli.need_token()
    async with cli.client() as client:
        args = cli.args
        game = None if args.code else args.game.upper()
        race = await client.race_open(args.code, game=game, variant=args.variant)
        cli.say(f"race {race.id} on {race.race['code']}: others join with `solitaire race join {race.id}`")
        if args.start_after is not None:
            await asyncio.sleep(args.start_after)
            await race.start(args.countdown)
            return await race_play(cli, race)
        return 0


@command("race join")
async def race_join(cli: Cli) -> int:
    cli.need_token()
    async with cli.client() as client:
        race = await client.race_join(cli.args.race_id)
        cli.say(
            f"joined race {race.id} on {race.race['code']} ({len(race.racers)} racers); waiting for the start"
        )
        return await race_play(cli, race)


async def race_play(cli: Cli, race: RaceHandle) -> int:
    if race.game_id and race.game is None:
        race.game = await race.client.open_game(race.game_id)
    game = await race.wait_game()

    def standings() -> None:
        parts = [f"{r['player']['name']} {r['progress']}/{r['progress_total']}" for r in race.racers]
        cli.say("race: " + ", ".join(parts))

    return await play_loop(cli, game, standings)


@command("race watch")
async def race_watch(cli: Cli) -> int:
    async with cli.client(anonymous=not cli.token) as client:
        race = await client.race_watch(cli.args.race_id)
        version = race.version
        while True:
            cli.say(f"race {race.id} {race.race['code']}: {race.status}")
            for r in race.racers:
                place = f"#{r['place']}" if r.get("place") else "  "
                cli.say(f"  {place} {r['player']['name']:<20} {r['status']:<10} {progress_of(r)}")
            if race.status in ("finished", "cancelled"):
                return 0
            version = await race.wait_change(version)


def progress_of(racer: dict[str, Any]) -> str:
    return f"{racer['progress']}/{racer['progress_total']}"


# -- accounts and the player's home ---------------------------------------------------------


def read_password(prompt: str, out: IO[str]) -> str:
    """A password: typed without echo on a terminal, else the next line of standard input."""
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    out.write(prompt + "\n")
    out.flush()
    return sys.stdin.readline().rstrip("\r\n")


@command("account create")
async def account_create(cli: Cli) -> int:
    """Claim the saved guest player as an account: log in with it on any other device."""
    cli.need_token()
    password = read_password("new password (10-128 characters): ", cli.out)
    account = await HttpApi(cli.server, cli.token).create_account(cli.args.username, password)
    saved = cli.config.account(cli.server) or {}
    cli.config.set_account(cli.server, account.id, account.name, saved.get("token", cli.token or ""))
    cli.config.set_username(cli.server, account.username or cli.args.username)
    cli.config.save()
    cli.say(f"{account.name} ({account.id}) is now the account {account.username!r}")
    cli.say(f"on another device: solitaire login {account.username}")
    return 0


@command("account show")
async def account_show(cli: Cli) -> int:
    cli.need_token()
    http = HttpApi(cli.server, cli.token)
    me = await http.account()
    if me.username is None:
        cli.say(f"{me.name} ({me.id}) is a guest: `solitaire account create USERNAME` makes it an account")
        return 0
    cli.say(f"{me.name} ({me.id}), account {me.username!r} on {cli.server}")
    for session in await http.sessions():
        mark = "this device" if session.current else session.id
        cli.say(
            f"  session {session.id}  since {day_and_time(session.created_at)}  {session.label}  ({mark})"
        )
    return 0


@command("account password")
async def account_password(cli: Cli) -> int:
    """Change the password; every other device is logged out."""
    cli.need_token()
    current = read_password("current password: ", cli.out)
    new = read_password("new password (10-128 characters): ", cli.out)
    ended = await HttpApi(cli.server, cli.token).change_password(current, new)
    cli.say(f"password changed; {plural(ended, 'other session')} ended")
    return 0


@command("account revoke")
async def account_revoke(cli: Cli) -> int:
    """End another device's session (its id from `solitaire account show`)."""
    cli.need_token()
    await HttpApi(cli.server, cli.token).revoke_session(cli.args.session_id)
    cli.say(f"session {cli.args.session_id} ended")
    return 0


@command("login")
async def login(cli: Cli) -> int:
    """Log in to an account from this device: its player, games and results are yours here too."""
    password = read_password(f"password for {cli.args.username}: ", cli.out)
    done = await HttpApi(cli.server).log_in(cli.args.username, password, label=cli.args.label)
    cli.config.set_account(cli.server, done.id, done.name, done.token)
    cli.config.set_username(cli.server, done.username)
    cli.config.save()
    cli.say(f"logged in as {done.username} ({done.name}, {done.id}) on {cli.server}")
    return 0


@command("logout")
async def logout(cli: Cli) -> int:
    """End this device's session: the saved token stops working at once and is forgotten."""
    cli.need_token()
    await HttpApi(cli.server, cli.token).log_out()
    cli.config.forget_account(cli.server)
    cli.config.save()
    cli.say(f"logged out of {cli.server}")
    return 0


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


def plural(count: int, word: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def player_or_self(cli: Cli) -> str:
    chosen = getattr(cli.args, "player_id", None)
    if chosen:
        return str(chosen)
    account = cli.config.account(cli.server)
    if account is None:
        raise SolitaireError("no_player", f"no player for {cli.server}: name one, or `solitaire login`")
    return account["id"]


STATS_COLUMNS = (
    "variant",
    "played",
    "won",
    "win rate",
    "streak",
    "best streak",
    "best moves",
    "avg moves",
    "best time",
    "avg time",
)


@command("stats")
async def stats(cli: Cli) -> int:
    found = await HttpApi(cli.server).stats(player_or_self(cli))
    cli.say(f"statistics of {found.player.name} ({found.player.id})")
    rows = [
        (
            v.variant,
            str(v.played),
            str(v.won),
            percent(v.win_rate),
            str(v.current_streak),
            str(v.best_streak),
            or_dash(v.best_moves),
            or_dash(v.average_moves),
            duration(v.best_time_ms),
            duration(v.average_time_ms),
        )
        for v in found.variants
    ]
    for line in table(STATS_COLUMNS, rows):
        cli.say(line)
    d = found.dailies
    median = "-" if d.median_percentile is None else f"{d.median_percentile:g}"
    cli.say(
        f"dailies: {plural(d.days_played, 'day')} played, streak {d.current_streak} (best {d.best_streak}), "
        f"best rank {or_dash(d.best_rank)}, median percentile {median}"
    )
    return 0


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


HISTORY_COLUMNS = ("started (UTC)", "game", "code", "result", "moves", "time", "score", "daily")


@command("history")
async def history(cli: Cli) -> int:
    args = cli.args
    http = HttpApi(cli.server, cli.token)
    page = await http.history(
        player_or_self(cli),
        limit=args.limit,
        cursor=args.cursor,
        game=args.game.upper() if args.game else None,
        variant=args.variant.upper() if args.variant else None,
        result=args.result,
        daily=args.daily,
    )
    if not page.games:
        cli.say("no games")
        return 0
    rows = [
        (
            day_and_time(g.created_at),
            g.id,
            g.code,
            g.result or g.status,
            str(g.moves),
            clock(g.elapsed_ms),
            str(g.score),
            g.daily or "",
        )
        for g in page.games
    ]
    for line in table(HISTORY_COLUMNS, rows, left=4):
        cli.say(line)
    if page.next_cursor:
        cli.say(f"older games: solitaire history --cursor {page.next_cursor}")
    return 0


REPLAY_HELP = """replay: Enter or n  next    p  previous    f  first    l  last
        a number   go to that move    m  the moves around this one    q  quit"""


def replay_state(replay: Replay, step: ReplayStep) -> GameState:
    """A replay step as the state the board is drawn from (the information bar as it was then)."""
    code = replay.code
    last = step.index == len(replay.steps) - 1
    return GameState.from_json(
        {
            "code": code,
            "game": code[:2],
            "variant": code.split("-")[1],
            "status": replay.status if last and replay.status in ("resigned", "expired") else step.status,
            "score": step.score,
            "moves": step.moves,
            "seq": step.index,
            "undo_depth": 0,
            "progress": step.progress,
            "progress_total": step.progress_total,
            "elapsed_ms": step.elapsed_ms,
            "clock_running": False,
            **step.view,
        }
    )


def show_step(cli: Cli, replay: Replay, index: int) -> None:
    step = replay.steps[index]
    total = len(replay.steps) - 1
    action = "the deal" if step.action is None else step.action.to_text()
    gained = f", {step.points:+d}" if step.points else ""
    cli.say(f"move {index} of {total}: {action}{gained}")
    show(cli, replay_state(replay, step))


def move_list(replay: Replay, index: int, around: int = 5) -> list[str]:
    """The moves near ``index``, the current one marked, each with its game clock."""
    low, high = max(1, index - around), min(len(replay.steps) - 1, index + around)
    lines = []
    for step in replay.steps[low : high + 1]:
        mark = ">" if step.index == index else " "
        action = step.action.to_text() if step.action else ""
        lines.append(f"{mark} {step.index:>4}  {clock(step.elapsed_ms):>6}  {action}")
    return lines or ["  (the deal only)"]


@command("replay")
async def replay(cli: Cli) -> int:
    """Step through a finished game in the terminal (or print one position with --move)."""
    found = await HttpApi(cli.server, cli.token).replay(cli.args.game_id)
    last = len(found.steps) - 1
    moves = plural(found.moves, "move")
    cli.say(f"replay of {found.game_id} ({found.code}) by {found.owner.name}: {found.result}, {moves}")
    if cli.args.move is not None:
        show_step(cli, found, max(0, min(last, cli.args.move)))
        return 0
    cli.say(REPLAY_HELP)
    index = 0
    show_step(cli, found, index)
    while True:
        line = await read_line("replay> ", cli.out)
        if line is None:
            return 0
        word = line.strip().lower()
        if word in ("q", "quit"):
            return 0
        keys = {"": index + 1, "n": index + 1, "p": index - 1, "f": 0, "l": last}
        if word in keys:
            target = keys[word]
        elif word.isdigit():
            target = int(word)
        elif word in ("?", "h", "help"):
            cli.say(REPLAY_HELP)
            continue
        elif word == "m":
            for line in move_list(found, index):
                cli.say(line)
            continue
        else:
            cli.say("type ? for the replay keys")
            continue
        if not 0 <= target <= last:
            cli.say(f"moves go from 0 (the deal) to {last}")
            continue
        index = target
        show_step(cli, found, index)


# -- arguments --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--server", default=argparse.SUPPRESS, help="server URL (default http://127.0.0.1:8000)"
    )
    common.add_argument("--config", default=argparse.SUPPRESS, help="config file (env SOLITAIRE_CONFIG)")
    common.add_argument("--color", dest="color", action="store_true", default=argparse.SUPPRESS)
    common.add_argument("--no-color", dest="color", action="store_false", default=argparse.SUPPRESS)
    common.add_argument("--trace", default=argparse.SUPPRESS, help="append every received message to FILE")
    parser = argparse.ArgumentParser(prog="solitaire", parents=[common], description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help_text: str, parent: Any = sub) -> argparse.ArgumentParser:
        found: argparse.ArgumentParser = parent.add_parser(name, parents=[common], help=help_text)
        return found

    player = add("player", "create or show your player").add_subparsers(dest="action", required=True)
    add("create", "create a player and keep its token", player).add_argument("--name")
    add("show", "show the saved player", player)
    add("rename", "rename your player", player).add_argument("name")
    p = add("play", "play a game in the terminal")
    p.add_argument("game", nargs="?", help="HH or SH")
    p.add_argument("--variant", help="SH: C4 (default), C2 or C1")
    p.add_argument("--code", help="a game code such as SH1-C4-AAAAAJ2")
    p.add_argument("--daily", action="store_true", help="today's daily challenge")
    p.add_argument("--game", dest="game_id", help="reopen a game by id")
    add("daily", "show the daily challenges").add_argument(
        "day", nargs="?", help="YYYY-MM-DD (default today)"
    )
    lb = add("leaderboard", "show a code's leaderboard (default: today's daily challenges)")
    lb.add_argument("code", nargs="?")
    lb.add_argument("--limit", type=int, default=10)
    add("watch", "watch a game live").add_argument("game_id")
    add("verify", "replay a finished game and check its result").add_argument("game_id")
    add("deal", "print the deal a code stands for").add_argument("code")
    account = add("account", "make your player an account, show it").add_subparsers(
        dest="action", required=True
    )
    add("create", "claim your player as an account (asks for a password)", account).add_argument("username")
    add("show", "show the account and its sessions", account)
    add("password", "change the password (other devices are logged out)", account)
    add("revoke", "end another device's session", account).add_argument("session_id")
    li = add("login", "log in to your account from this device (asks for the password)")
    li.add_argument("username")
    li.add_argument("--label", help="what this device is called in the session list")
    add("logout", "end this device's session")
    add("stats", "a player's statistics (default: yours)").add_argument("player_id", nargs="?")
    hi = add("history", "a player's games, newest first (default: yours)")
    hi.add_argument("player_id", nargs="?")
    hi.add_argument("--game", help="HH or SH")
    hi.add_argument("--variant", help="a variant such as SH1-C4")
    hi.add_argument("--result", choices=["won", "resigned", "expired", "open"])
    hi.add_argument("--daily", action="store_true", help="daily challenges only")
    hi.add_argument("--limit", type=int, default=20)
    hi.add_argument("--cursor", help="the next page (printed under a full page)")
    rp = add("replay", "step through a finished game")
    rp.add_argument("game_id")
    rp.add_argument("--move", type=int, help="print only the position after this move (0: the deal)")
    race = add("race", "open, join or watch a race").add_subparsers(dest="action", required=True)
    ro = add("open", "open a race", race)
    ro.add_argument("game", nargs="?", default="HH", help="HH or SH")
    ro.add_argument("--variant")
    ro.add_argument("--code")
    ro.add_argument("--start-after", type=float, help="start it after this many seconds and play")
    ro.add_argument("--countdown", type=int, default=3)
    add("join", "join a race and play it", race).add_argument("race_id")
    add("watch", "follow a race's standings", race).add_argument("race_id")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    name = args.command + (f" {args.action}" if getattr(args, "action", None) else "")
    cli = Cli(args)
    try:
        return asyncio.run(COMMANDS[name](cli))
    except SolitaireError as exc:
        sys.stderr.write(f"solitaire: {exc.message} ({exc.code})\n")
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        cli.close()


if __name__ == "__main__":
    sys.exit(main())
