"""``svc auth``: login (saves config.toml, 0600), whoami, logout."""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import config as config_mod
from ..client import Client
from . import views
from .app import State, cli, pass_state
from .support import emit, table_option


@cli.group()
def auth() -> None:
    """Log in (save URL and token), show who you are, log out."""


@auth.command()
@click.option("--url", "login_url", metavar="URL", help="Installation origin (asked when missing).")
@click.option("--token-stdin", is_flag=True, help="Read the token from standard input instead of asking.")
@click.option("--no-verify", is_flag=True, help="Save without checking the token against the server.")
@pass_state
def login(state: State, login_url: str | None, token_stdin: bool, no_verify: bool) -> None:
    """Ask for the URL and a personal access token, check them, save config.toml (mode 0600)."""
    path = config_mod.config_path()
    saved = config_mod.load_saved(path)
    url = login_url or state.url
    if not url:
        default = saved.get("url") if isinstance(saved.get("url"), str) else None
        url = click.prompt("Server URL (origin, e.g. https://gis.example.org)", default=default, err=True)
    url = config_mod.normalize_url(url, allow_http=state.allow_http)
    if token_stdin:
        token = sys.stdin.readline().strip()
    else:
        token = click.prompt("Personal access token", hide_input=True, err=True).strip()
    user: Any = None
    if not no_verify:
        with Client(
            url=url,
            token=token,
            timeout=state.timeout,
            allow_http=state.allow_http,
            transport=state.transport,
        ) as client:
            user = client.me()
    settings: dict[str, str | bool] = {"url": url, "token": token}
    if state.allow_http:
        settings["allow_http"] = True
    saved_path = config_mod.save(settings, path)
    emit(state, {"saved": str(saved_path), "url": url, "user": user}, view=views.login)


@auth.command()
@table_option
@pass_state
def whoami(state: State) -> None:
    """Show the token owner's profile (GET /api/v1/auth/me)."""
    emit(state, state.client().me())


@auth.command()
@pass_state
def logout(state: State) -> None:
    """Remove the saved token from config.toml (the URL stays)."""
    path = config_mod.config_path()
    saved = config_mod.load_saved(path)
    removed = "token" in saved
    if removed:
        config_mod.save({k: v for k, v in saved.items() if k != "token"}, path)
    emit(state, {"config": str(path), "token_removed": removed})
