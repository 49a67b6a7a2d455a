"""URL checks, credential precedence, and the saved config.toml."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from svc_client import Client, ConfigError
from svc_client import config as cfg

from .conftest import TOKEN


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://gis.example.org", "https://gis.example.org"),
        ("https://gis.example.org/", "https://gis.example.org"),
        ("gis.example.org", "https://gis.example.org"),
        ("HTTPS://GIS.Example.org:8443", "https://gis.example.org:8443"),
        ("https://example.org/gis/", "https://example.org/gis"),
        ("http://127.0.0.1:18080", "http://127.0.0.1:18080"),
        ("http://localhost:8080", "http://localhost:8080"),
        ("http://[::1]:8080", "http://[::1]:8080"),
    ],
)
def test_normalize_url(given: str, expected: str) -> None:
    assert cfg.normalize_url(given) == expected


@pytest.mark.parametrize(
    ("given", "code"),
    [
        ("https://gis.example.org/api/v1", "invalid_url"),
        ("https://gis.example.org/api/v1/", "invalid_url"),
        ("http://gis.example.org", "insecure_url"),
        ("http://10.0.0.5:8080", "insecure_url"),
        ("ftp://gis.example.org", "invalid_url"),
        ("https://user:secret@gis.example.org", "invalid_url"),
        ("https://gis.example.org?token=x", "invalid_url"),
        ("https://", "invalid_url"),
        ("", "missing_url"),
    ],
)
def test_bad_urls_are_config_errors(given: str, code: str) -> None:
    with pytest.raises(ConfigError) as caught:
        cfg.normalize_url(given)
    assert caught.value.code == code


def test_api_v1_suffix_message_says_what_to_use() -> None:
    with pytest.raises(ConfigError, match=r"without /api/v1.*use https://gis.example.org\)"):
        Client(url="https://gis.example.org/api/v1", token=TOKEN)


def test_plain_http_needs_explicit_opt_in() -> None:
    assert cfg.normalize_url("http://gis.internal", allow_http=True) == "http://gis.internal"
    with Client(url="http://gis.internal", token=TOKEN, allow_http=True) as client:
        assert client.url == "http://gis.internal"


def test_arguments_beat_environment_beat_file(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg.save({"url": "https://file.example", "token": "svcpat_file"})
    settings = cfg.resolve()
    assert (settings.url, settings.token, settings.url_from, settings.token_from) == (
        "https://file.example", "svcpat_file", "config file", "config file")

    monkeypatch.setenv("SVC_URL", "https://env.example")
    monkeypatch.setenv("SVC_TOKEN", "svcpat_env")
    settings = cfg.resolve()
    assert (settings.url, settings.token) == ("https://env.example", "svcpat_env")

    settings = cfg.resolve("https://arg.example", "svcpat_arg")
    assert (settings.url, settings.token, settings.url_from, settings.token_from) == (
        "https://arg.example", "svcpat_arg", "argument", "argument")


def test_env_token_with_saved_url(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg.save({"url": "https://file.example", "token": "svcpat_file"})
    monkeypatch.setenv("SVC_TOKEN", "svcpat_env")
    settings = cfg.resolve()
    assert (settings.url, settings.token) == ("https://file.example", "svcpat_env")


def test_saved_token_is_never_sent_to_another_server() -> None:
    cfg.save({"url": "https://file.example", "token": "svcpat_file"})
    assert cfg.resolve("https://file.example/").token == "svcpat_file"
    assert cfg.resolve("https://other.example").token is None


def test_saved_http_opt_in_applies_to_the_saved_url_only() -> None:
    cfg.save({"url": "http://gis.internal", "token": "svcpat_file", "allow_http": True})
    assert cfg.resolve().url == "http://gis.internal"
    with pytest.raises(ConfigError):
        cfg.resolve("http://other.internal")


def test_file_not_read_when_arguments_suffice() -> None:
    cfg.config_path().write_text("this is [ not toml")
    assert cfg.resolve("https://a.example", "svcpat_x").token == "svcpat_x"
    with pytest.raises(ConfigError) as caught:
        cfg.resolve("https://a.example")
    assert caught.value.code == "config_invalid"


def test_missing_url_everywhere() -> None:
    with pytest.raises(ConfigError) as caught:
        Client()
    assert caught.value.code == "missing_url"
    assert "SVC_URL" in caught.value.message


def test_token_with_whitespace_is_refused() -> None:
    with pytest.raises(ConfigError):
        Client(url="https://a.example", token="svcpat_x\r\nX-Evil: 1")


def test_save_writes_0600_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "config.toml"
    cfg.save({"url": "https://a.example", "token": 'svc"pat\\x', "allow_http": False}, path)
    assert cfg.load_saved(path) == {"url": "https://a.example", "token": 'svc"pat\\x', "allow_http": False}
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["config.toml"]


def test_save_replaces_a_world_readable_file_with_0600(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('url = "x"\n')
    path.chmod(0o644)
    cfg.save({"url": "https://a.example"}, path)
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_config_dir_override_and_platform_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert cfg.config_dir({"SVC_CONFIG_DIR": str(tmp_path)}) == tmp_path
    if sys.platform.startswith("linux"):
        assert cfg.config_dir({"XDG_CONFIG_HOME": "/x/conf"}) == Path("/x/conf/svc")
        assert cfg.config_dir({}) == Path.home() / ".config" / "svc"


def test_missing_file_means_nothing_saved(tmp_path: Path) -> None:
    assert cfg.load_saved(tmp_path / "absent.toml") == {}


def test_settings_repr_hides_the_token() -> None:
    settings = cfg.resolve("https://a.example", TOKEN)
    assert TOKEN not in repr(settings)
