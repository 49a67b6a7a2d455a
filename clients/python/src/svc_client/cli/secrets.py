"""Connection secrets on the command line: from a prompt, a file or standard input, never a flag.

A value typed after a flag lands in the shell history and the process list, so the secret
fields of a type (the connector catalogue's ``secrets``) are refused in inline ``--config``,
``--data`` and ``--set``; they come from ``--secret-file FIELD=PATH``, ``--secret-stdin FIELD``
(``--password-stdin``), a ``@file`` given to ``--config``/``--data``, or a hidden prompt.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TypeVar

import click

from ..errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class SecretOptions:
    files: Sequence[str] = ()
    stdin_field: str | None = None
    no_input: bool = False
    clear: Sequence[str] = field(default_factory=tuple)


def secret_options(*, clearing: bool = False) -> Callable[[F], F]:
    """``--secret-file``, ``--secret-stdin``, ``--password-stdin``, ``--no-input`` (and
    ``--clear-secret`` for update); :func:`secret_options_of` gathers them."""

    def decorate(f: F) -> F:
        options = [
            click.option(
                "--secret-file", "secret_files", multiple=True, metavar="FIELD=PATH",
                help="Read a secret field from a file (one trailing newline dropped). Repeatable.",
            ),
            click.option("--secret-stdin", metavar="FIELD", help="Read a secret field from standard input."),
            click.option("--password-stdin", is_flag=True, help="Read the password field from standard input."),
            click.option("--no-input", is_flag=True, help="Never prompt for secrets."),
        ]
        if clearing:
            options.append(click.option(
                "--clear-secret", "clear_secrets", multiple=True, metavar="FIELD",
                help="Remove a stored secret. Repeatable.",
            ))
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


def secret_options_of(kwargs: dict[str, Any]) -> SecretOptions:
    """Pop the options :func:`secret_options` added from a command's keyword arguments."""
    files = kwargs.pop("secret_files", ())
    stdin_field = kwargs.pop("secret_stdin", None)
    if kwargs.pop("password_stdin", False):
        if stdin_field not in (None, "password"):
            raise click.UsageError("--password-stdin and --secret-stdin both read standard input")
        stdin_field = "password"
    return SecretOptions(
        files=files, stdin_field=stdin_field, no_input=kwargs.pop("no_input", False),
        clear=kwargs.pop("clear_secrets", ()),
    )


def refuse_inline(keys: Iterable[str], secrets: Sequence[str], type_: str, where: str) -> None:
    """A secret typed on the command line is refused before anything is sent."""
    typed = sorted(set(keys) & set(secrets))
    if typed:
        names = ", ".join(typed)
        raise click.UsageError(
            f"{names}: a secret of a {type_} connection cannot be given in {where}, where it would "
            f"land in the shell history; use --secret-file {typed[0]}=PATH, --secret-stdin {typed[0]}, "
            "a @file, or the prompt"
        )


def _check_field(name: str, secrets: Sequence[str], type_: str) -> None:
    if name not in secrets:
        known = ", ".join(secrets) or "none"
        raise click.UsageError(
            f"{name!r} is not a secret of a {type_} connection (its secrets: {known}); "
            "give other fields with --config or --set"
        )


def _strip_newline(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text


def collect(
    options: SecretOptions,
    secrets: Sequence[str],
    type_: str,
    *,
    already: Iterable[str] = (),
    prompt: bool,
    interactive: bool,
    stdin_taken: bool = False,
) -> dict[str, Any]:
    """The secret values to send: from files, standard input, and (on a terminal) a prompt for
    each secret field not given yet. ``already``: secrets present in a @file configuration."""
    values: dict[str, Any] = {}
    for spec in options.files:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise click.UsageError(f"--secret-file takes FIELD=PATH, got {spec!r}")
        _check_field(name, secrets, type_)
        file = Path(path).expanduser()
        try:
            values[name] = _strip_newline(file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read {file}: {exc.strerror}", code="missing_file") from None
    if options.stdin_field:
        _check_field(options.stdin_field, secrets, type_)
        if stdin_taken:
            raise click.UsageError("standard input already carries the JSON; give the secret with --secret-file")
        values[options.stdin_field] = _strip_newline(sys.stdin.read())
    for name in options.clear:
        _check_field(name, secrets, type_)
        if name in values:
            raise click.UsageError(f"{name} is both given and cleared")
        values[name] = None  # the API's null clears a stored secret
    if prompt and interactive and not options.no_input:
        given = set(values) | set(already)
        for name in secrets:
            if name in given:
                continue
            answer = click.prompt(
                f"{name} (secret; Enter to leave out)", default="", show_default=False,
                hide_input=True, err=True,
            )
            if answer:
                values[name] = answer
    return values
