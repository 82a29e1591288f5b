"""``solitaire stats``, ``history`` and ``replay``: a player's record, and a finished game step by step."""

from __future__ import annotations

from client.cli.format import day_and_time, duration, or_dash, percent, plural, table
from client.cli.invocation import Cli, Subcommands, read_line, show
from client.errors import SolitaireError
from client.http import HttpApi
from client.models import GameState, Replay, ReplayStep
from client.render import clock


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


HISTORY_COLUMNS = ("started (UTC)", "game", "code", "result", "moves", "time", "score", "daily")


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


def add_commands(commands: Subcommands) -> None:
    """``stats [PLAYER]``, ``history [PLAYER]`` and ``replay GAME_ID``."""
    st = commands.add("stats", "a player's statistics (default: yours)", stats)
    st.add_argument("player_id", nargs="?")
    hi = commands.add("history", "a player's games, newest first (default: yours)", history)
    hi.add_argument("player_id", nargs="?")
    hi.add_argument("--game", help="HH or SH")
    hi.add_argument("--variant", help="a variant such as SH1-C4")
    hi.add_argument("--result", choices=["won", "resigned", "expired", "open"])
    hi.add_argument("--daily", action="store_true", help="daily challenges only")
    hi.add_argument("--limit", type=int, default=20)
    hi.add_argument("--cursor", help="the next page (printed under a full page)")
    rp = commands.add("replay", "step through a finished game", replay)
    rp.add_argument("game_id")
    rp.add_argument("--move", type=int, help="print only the position after this move (0: the deal)")
