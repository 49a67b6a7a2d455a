"""Where the URL and token come from, and the CLI's saved ``config.toml``.

Precedence, highest first: constructor arguments; ``SVC_URL`` / ``SVC_TOKEN``; the file saved by
``svc auth login`` in ``SVC_CONFIG_DIR`` or the platform's configuration folder. A token read from
the file is only used with the URL saved beside it, so a saved token is never sent to a server
chosen by an argument or a variable.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "ENV_URL",
    "ENV_TOKEN",
    "ENV_CONFIG_DIR",
    "Settings",
    "config_dir",
    "config_path",
    "load_saved",
    "save",
    "normalize_url",
    "is_loopback_host",
    "resolve",
]

ENV_URL = "SVC_URL"
ENV_TOKEN = "SVC_TOKEN"
ENV_CONFIG_DIR = "SVC_CONFIG_DIR"
CONFIG_FILE = "config.toml"
APP_NAME = "svc"


@dataclass(frozen=True)
class Settings:
    url: str
    token: str | None
    allow_http: bool
    url_from: str  # "argument", "environment" or "config file"
    token_from: str | None

    def __repr__(self) -> str:  # never show the token
        token = "set" if self.token else "none"
        return f"Settings(url={self.url!r}, token={token}, url_from={self.url_from!r})"


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``SVC_CONFIG_DIR`` when set, else the platform's per-user configuration folder + ``svc``."""
    env = os.environ if env is None else env
    override = env.get(ENV_CONFIG_DIR)
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32":
        base = env.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
        return Path(base) / APP_NAME
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP_NAME
    xdg = env.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / APP_NAME


def config_path(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / CONFIG_FILE


def load_saved(path: Path | None = None) -> dict[str, Any]:
    """The saved configuration, or ``{}`` when there is no file."""
    path = config_path() if path is None else path
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}", code="config_unreadable") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", code="config_invalid") from None
    return data


def _toml_string(value: str) -> str:
    out = ['"']
    for ch in value:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def save(settings: Mapping[str, str | bool], path: Path | None = None) -> Path:
    """Write ``config.toml`` readable by its owner only (0600), atomically."""
    path = config_path() if path is None else path
    lines = ["# Written by `svc auth login`. Holds a secret token: keep it private.\n"]
    for key, value in settings.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}\n")
        else:
            lines.append(f"{key} = {_toml_string(str(value))}\n")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=path.parent)
        try:
            os.chmod(tmp, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.writelines(lines)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        os.chmod(path, 0o600)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}", code="config_unwritable") from None
    return path


def is_loopback_host(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def normalize_url(url: str, *, allow_http: bool = False) -> str:
    """Check and normalise an installation origin: ``https://host[:port][/prefix]``, no slash at the end.

    A bare host name gets ``https://``. Plain ``http`` is accepted only for a loopback host or with
    ``allow_http``. A URL ending in ``/api/v1`` is refused: the client adds that prefix itself.
    """
    url = (url or "").strip()
    if not url:
        raise ConfigError(
            f"no server URL: pass url=, set {ENV_URL}, or run `svc auth login`", code="missing_url"
        )
    if "://" not in url:
        url = "https://" + url
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise ConfigError(f"unsupported URL scheme {parts.scheme!r}: use https", code="invalid_url")
    try:
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise ConfigError(f"invalid URL {url!r}", code="invalid_url") from None
    if not host:
        raise ConfigError(f"invalid URL {url!r}: no host", code="invalid_url")
    if parts.username is not None or parts.password is not None:
        raise ConfigError("credentials must not be part of the URL", code="invalid_url")
    if parts.query or parts.fragment:
        raise ConfigError("the URL must not have a query or a fragment", code="invalid_url")
    path = parts.path.rstrip("/")
    if path.lower().endswith("/api/v1"):
        raise ConfigError(
            f"the URL must be the installation origin, without /api/v1 (got {url!r}; "
            f"use {scheme}://{parts.netloc}{path[: -len('/api/v1')]})",
            code="invalid_url",
        )
    if scheme == "http" and not (allow_http or is_loopback_host(host)):
        raise ConfigError(
            f"refusing plain http to {host}: use https (plain http is allowed for loopback "
            "addresses, or with allow_http=True / --allow-http)",
            code="insecure_url",
        )
    return f"{scheme}://{parts.netloc.lower()}{path}"


def _check_token(token: str) -> str:
    token = token.strip()
    if not token or any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in token):
        raise ConfigError("the token is empty or contains whitespace", code="invalid_token")
    return token


def resolve(
    url: str | None = None,
    token: str | None = None,
    *,
    allow_http: bool = False,
    env: Mapping[str, str] | None = None,
    saved: Mapping[str, Any] | None = None,
) -> Settings:
    """Apply the precedence rules. ``saved`` defaults to the contents of ``config.toml``."""
    env = os.environ if env is None else env
    if saved is None:
        # The file is read only when an argument or a variable leaves something open.
        complete = bool(url or env.get(ENV_URL)) and bool(token or env.get(ENV_TOKEN))
        saved = {} if complete else load_saved(config_path(env))
    saved_url = saved.get("url") if isinstance(saved.get("url"), str) else None
    saved_token = saved.get("token") if isinstance(saved.get("token"), str) else None
    saved_allow_http = saved.get("allow_http") is True

    if url:
        raw_url, url_from = url, "argument"
    elif env.get(ENV_URL):
        raw_url, url_from = env[ENV_URL], "environment"
    elif saved_url:
        raw_url, url_from = saved_url, "config file"
    else:
        raise ConfigError(
            f"no server URL: pass url=, set {ENV_URL}, or run `svc auth login`", code="missing_url"
        )

    normalized_saved = None
    if saved_url:
        try:
            normalized_saved = normalize_url(saved_url, allow_http=True)
        except ConfigError:
            normalized_saved = None
    same_server_as_saved = False
    # The saved URL's own http opt-in applies to that URL only.
    if normalized_saved is not None:
        same_server_as_saved = normalize_url(raw_url, allow_http=True) == normalized_saved
    final_url = normalize_url(raw_url, allow_http=allow_http or (saved_allow_http and same_server_as_saved))

    final_token: str | None
    if token:
        final_token, token_from = _check_token(token), "argument"
    elif env.get(ENV_TOKEN):
        final_token, token_from = _check_token(env[ENV_TOKEN]), "environment"
    elif saved_token and same_server_as_saved:
        final_token, token_from = _check_token(saved_token), "config file"
    else:
        final_token, token_from = None, None
    return Settings(
        url=final_url,
        token=final_token,
        allow_http=allow_http,
        url_from=url_from,
        token_from=token_from,
    )
