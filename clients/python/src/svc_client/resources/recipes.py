"""Recipes: saved, ordered lists of transform operations."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .base import JSON, Collection


def _body(name: str, operations: Sequence[Mapping[str, Any]], description: str | None) -> JSON:
    body: JSON = {"name": name, "operations": [dict(op) for op in operations]}
    if description is not None:
        body["description"] = description
    return body


class Recipes(Collection):
    path = "/recipes"

    def create(
        self, name: str, operations: Sequence[Mapping[str, Any]], description: str | None = None
    ) -> JSON:
        return self._client._object("POST", self.path, json=_body(name, operations, description))

    def update(
        self,
        id: str,
        name: str,
        operations: Sequence[Mapping[str, Any]],
        description: str | None = None,
    ) -> JSON:
        """Replace a Recipe (PUT: the whole body). Jobs made from it keep their snapshot."""
        return self._client._object("PUT", self._item(id), json=_body(name, operations, description))
