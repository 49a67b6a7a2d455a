"""Recipes: saved, ordered lists of transform operations."""

from __future__ import annotations

from typing import Any, Mapping

from .base import JSON, Collection, given_body

#: The fields of a Recipe body, in the order they may be given positionally.
FIELDS = ("name", "operations", "description")


def _clean(body: Mapping[str, Any]) -> JSON:
    """What the API takes: the operations as plain dicts, no ``description: None``."""
    out: JSON = {k: v for k, v in body.items() if k in FIELDS and not (k == "description" and v is None)}
    if "operations" in out:
        out["operations"] = [dict(op) for op in out["operations"]]
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise TypeError(f"unknown Recipe field(s): {', '.join(unknown)}")
    return out


class Recipes(Collection):
    path = "/recipes"

    def create(self, body: Mapping[str, Any] | Any = None, /, *positional: Any, **fields: Any) -> JSON:
        """Create a Recipe: ``create({"name": …, "operations": […]})``, ``create(name=…, operations=[…])``
        or ``create("clean", ops, "description")`` (README, "Calling convention")."""
        given = given_body(body, positional, FIELDS, fields) or dict(fields)
        return self._client._object("POST", self.path, json=_clean(given))

    def update(self, id: str, body: Mapping[str, Any] | Any = None, /, *positional: Any, **fields: Any) -> JSON:
        """Replace a Recipe (PUT). With a body (or positional fields) that is the whole new body;
        with keyword fields only, the saved Recipe is read and only those fields change.
        Jobs made from it keep their snapshot."""
        given = given_body(body, positional, FIELDS, fields)
        if given is None:
            saved = self.get(id)
            given = {k: saved.get(k) for k in FIELDS}
            given.update(fields)
        return self._client._object("PUT", self._item(id), json=_clean(given))
