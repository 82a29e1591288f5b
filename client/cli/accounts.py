"""``solitaire account``, ``login`` and ``logout``: the player as an account, on several devices."""

from __future__ import annotations

import getpass
import sys
from typing import IO

from client.cli.format import day_and_time, plural
from client.cli.invocation import Cli, Subcommands
from client.http import HttpApi


def read_password(prompt: str, out: IO[str]) -> str:
    """A password: typed without echo on a terminal, else the next line of standard input."""
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    out.write(prompt + "\n")
    out.flush()
    return sys.stdin.readline().rstrip("\r\n")


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


async def account_password(cli: Cli) -> int:
    """Change the password; every other device is logged out."""
    cli.need_token()
    current = read_password("current password: ", cli.out)
    new = read_password("new password (10-128 characters): ", cli.out)
    ended = await HttpApi(cli.server, cli.token).change_password(current, new)
    cli.say(f"password changed; {plural(ended, 'other session')} ended")
    return 0


async def account_revoke(cli: Cli) -> int:
    """End another device's session (its id from `solitaire account show`)."""
    cli.need_token()
    await HttpApi(cli.server, cli.token).revoke_session(cli.args.session_id)
    cli.say(f"session {cli.args.session_id} ended")
    return 0


async def login(cli: Cli) -> int:
    """Log in to an account from this device: its player, games and results are yours here too."""
    password = read_password(f"password for {cli.args.username}: ", cli.out)
    done = await HttpApi(cli.server).log_in(cli.args.username, password, label=cli.args.label)
    cli.config.set_account(cli.server, done.id, done.name, done.token)
    cli.config.set_username(cli.server, done.username)
    cli.config.save()
    cli.say(f"logged in as {done.username} ({done.name}, {done.id}) on {cli.server}")
    return 0


async def logout(cli: Cli) -> int:
    """End this device's session: the saved token stops working at once and is forgotten."""
    cli.need_token()
    await HttpApi(cli.server, cli.token).log_out()
    cli.config.forget_account(cli.server)
    cli.config.save()
    cli.say(f"logged out of {cli.server}")
    return 0


def add_commands(commands: Subcommands) -> None:
    """``account create|show|password|revoke``, ``login USERNAME`` and ``logout``."""
    account = commands.nest("account", "make your player an account, show it")
    account.add(
        "create", "claim your player as an account (asks for a password)", account_create
    ).add_argument("username")
    account.add("show", "show the account and its sessions", account_show)
    account.add("password", "change the password (other devices are logged out)", account_password)
    account.add("revoke", "end another device's session", account_revoke).add_argument("session_id")
    li = commands.add("login", "log in to your account from this device (asks for the password)", login)
    li.add_argument("username")
    li.add_argument("--label", help="what this device is called in the session list")
    commands.add("logout", "end this device's session", logout)
