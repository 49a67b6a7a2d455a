"""Server-driven catalogs: transformation operations and file formats (never hard-coded)."""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

from ..errors import ServerError
from .base import JSONList

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
