"""Server-driven catalogs: operations, file formats, connection types (never hard-coded)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from ..errors import ServerError
from .base import JSON, JSONList

if TYPE_CHECKING:
    from ..client import Client


class _Catalog:
    path = ""
    auth = True

    def __init__(self, client: Client) -> None:
        self._client = client

    def list(self) -> JSONList:
        data = self._client._json("GET", self.path, auth=self.auth)
        items = data.get("items") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise ServerError(f"GET {self.path}: expected {{items: [...]}}", code="invalid_response")
        return items

    def ids(self) -> builtins.list[str]:
        """The stable ids of the catalog's entries (use these, never display labels)."""
        return [str(item["id"]) for item in self.list() if isinstance(item, dict) and "id" in item]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"


class Transformations(_Catalog):
    """``GET /api/v1/transformations``: the operation types a pipeline or Recipe may use."""

    path = "/transformations"


class Formats(_Catalog):
    """``GET /api/v1/formats``: input and output formats (no token needed)."""

    path = "/formats"
    auth = False


class Connectors(_Catalog):
    """``GET /api/v1/connectors``: connection types, their fields (JSON Schema), secrets,
    selectors (``source_resource``) and targets (``destination_target``). No token needed."""

    path = "/connectors"
    auth = False

    def ids(self) -> builtins.list[str]:
        return [str(item["type"]) for item in self.list() if isinstance(item, dict) and "type" in item]

    def get(self, type: str) -> JSON:
        """The catalogue entry of one type; ``ValueError`` names the known types if it is unknown."""
        entries = self.list()
        for entry in entries:
            if isinstance(entry, dict) and entry.get("type") == type:
                return entry
        known = ", ".join(str(e.get("type")) for e in entries if isinstance(e, dict))
        raise ValueError(f"unknown connection type {type!r}; the server knows: {known}")

    def secrets(self, type: str) -> builtins.list[str]:
        """The write-only fields of a type's configuration (shown as ``has_<field>`` flags)."""
        return [str(name) for name in self.get(type).get("secrets") or []]
