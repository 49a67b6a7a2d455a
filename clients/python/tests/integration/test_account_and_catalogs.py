"""me(), credentials, and the server catalogs."""

from __future__ import annotations

from typing import Callable

import pytest

from svc_client import AuthenticationError, AuthorizationError, Client


def test_me_with_a_token(client_with: Callable[..., Client], admin_email: str) -> None:
    client = client_with("account:read")
    me = client.me()
    assert me["email"] == admin_email
    assert me["id"]
    auth = me.get("auth")
    if isinstance(auth, dict):
        assert auth["kind"] == "token"
        assert auth["scopes"] == ["account:read"]


def test_invalid_token_is_authentication_error(server_url: str) -> None:
    with Client(url=server_url, token="svcpat_" + "0" * 43) as client:
        with pytest.raises(AuthenticationError) as caught:
            client.me()
    assert caught.value.status_code == 401
    assert caught.value.code


def test_missing_scope_is_authorization_error(client_with: Callable[..., Client]) -> None:
    client = client_with("recipes:read")
    with pytest.raises(AuthorizationError) as caught:
        client.me()
    assert caught.value.status_code == 403


def test_formats_catalog_needs_no_token(server_url: str) -> None:
    with Client(url=server_url) as client:
        formats = client.formats.list()
    assert formats, "the format catalog is empty"
    assert all(isinstance(f.get("id"), str) and f["id"] for f in formats)
    assert any(f.get("write") for f in formats), "no writable format: nothing could be converted"


def test_system_needs_no_token(server_url: str) -> None:
    with Client(url=server_url) as client:
        system = client.system()
    assert isinstance(system, dict) and system


def test_transformations_catalog(client_with: Callable[..., Client]) -> None:
    client = client_with("workspaces:read")
    catalog = client.transformations.list()
    catalog_ids = {entry["id"] for entry in catalog}
    # The operation types the spec names must be in the catalog, by their stable ids.
    assert {"rename_column", "buffer", "simplify"} <= catalog_ids


def test_transformations_catalog_needs_workspaces_read(client_with: Callable[..., Client]) -> None:
    assert client_with("workspaces:read").transformations.list()
    with pytest.raises(AuthorizationError) as caught:
        client_with("recipes:read").transformations.list()
    assert caught.value.status_code == 403
