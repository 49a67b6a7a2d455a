"""Recipe round trip against the real server, with its error mapping."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from svc_client import AuthorizationError, Client, NotFoundError, ValidationError

from .conftest import ids

OPERATIONS: list[dict[str, Any]] = [
    {"type": "rename_column", "from": "name", "to": "title"},
    {"type": "buffer", "distance": 10, "units": "source"},
]


def assert_same_operations(stored: list[dict[str, Any]], sent: list[dict[str, Any]]) -> None:
    """Stored operations keep the order and every key sent; the server may add defaults."""
    assert len(stored) == len(sent)
    for got, want in zip(stored, sent):
        assert {k: got.get(k) for k in want} == want


@pytest.fixture
def writer(client_with: Callable[..., Client]) -> Client:
    return client_with("recipes:read", "recipes:write")


def test_round_trip(writer: Client) -> None:
    created = writer.recipes.create("svc-client round trip", OPERATIONS)
    recipe_id = created["id"]
    try:
        assert created["name"] == "svc-client round trip"
        assert_same_operations(created["operations"], OPERATIONS)

        assert recipe_id in ids(writer.recipes.list())
        fetched = writer.recipes.get(recipe_id)
        assert_same_operations(fetched["operations"], OPERATIONS)

        new_ops: list[dict[str, Any]] = [{"type": "simplify", "tolerance": 0.5}]
        updated = writer.recipes.update(recipe_id, "svc-client renamed", new_ops)
        assert updated["name"] == "svc-client renamed"
        assert_same_operations(updated["operations"], new_ops)
        assert writer.recipes.get(recipe_id)["name"] == "svc-client renamed"
    finally:
        writer.recipes.delete(recipe_id)

    with pytest.raises(NotFoundError) as caught:
        writer.recipes.get(recipe_id)
    assert caught.value.status_code == 404
    assert caught.value.code in ("recipe_not_found", "not_found")
    assert recipe_id not in ids(writer.recipes.list())


def test_list_follows_cursors(writer: Client) -> None:
    made = [writer.recipes.create(f"svc-client page {i}", OPERATIONS[:1])["id"] for i in range(3)]
    try:
        listed = ids(writer.recipes.list(page_size=1))
        assert set(made) <= set(listed)
        assert len(listed) == len(set(listed)), "a page repeated an item"
    finally:
        for recipe_id in made:
            writer.recipes.delete(recipe_id)


def test_read_only_token_cannot_write(client_with: Callable[..., Client], writer: Client) -> None:
    reader = client_with("recipes:read")
    with pytest.raises(AuthorizationError) as caught:
        reader.recipes.create("svc-client forbidden", OPERATIONS)
    assert caught.value.status_code == 403
    assert caught.value.code == "forbidden"

    recipe_id = writer.recipes.create("svc-client readable", OPERATIONS)["id"]
    try:
        assert reader.recipes.get(recipe_id)["id"] == recipe_id
        with pytest.raises(AuthorizationError):
            reader.recipes.delete(recipe_id)
    finally:
        writer.recipes.delete(recipe_id)


def test_unknown_operation_type_is_validation_error(writer: Client) -> None:
    with pytest.raises(ValidationError) as caught:
        writer.recipes.create("svc-client invalid", [{"type": "no_such_operation"}])
    assert caught.value.status_code == 422
    assert caught.value.code
    assert caught.value.message
    assert isinstance(caught.value.details, dict)


def test_missing_recipe_is_not_found(writer: Client) -> None:
    with pytest.raises(NotFoundError) as caught:
        writer.recipes.get("rcp_doesnotexist")
    assert caught.value.status_code == 404
