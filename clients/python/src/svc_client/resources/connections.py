"""Sources and Destinations: saved connections, with test and PostGIS discovery."""

from __future__ import annotations

from typing import Any, Mapping

from .base import JSON, Collection


class _Connections(Collection):
    def create(self, name: str, type: str, configuration: Mapping[str, Any]) -> JSON:
        body = {"name": name, "type": type, "configuration": dict(configuration)}
        return self._client._object("POST", self.path, json=body)

    def update(self, id: str, name: str, type: str, configuration: Mapping[str, Any]) -> JSON:
        """Replace a saved connection (PUT: the whole body)."""
        body = {"name": name, "type": type, "configuration": dict(configuration)}
        return self._client._object("PUT", self._item(id), json=body)

    def test(self, id: str) -> Any:
        """Test a saved connection."""
        return self._client._json("POST", self._item(id, "test"), long=True)

    def test_draft(
        self, type: str, configuration: Mapping[str, Any], name: str | None = None
    ) -> Any:
        """Test an unsaved connection."""
        body: dict[str, Any] = {"type": type, "configuration": dict(configuration)}
        if name is not None:
            body["name"] = name
        return self._client._json("POST", f"{self.path}/test", json=body, long=True)

    def discover(self, id: str, schema: str | None = None) -> JSON:
        """PostGIS discovery: the schemas, or with ``schema`` that schema's tables and views."""
        return self._client._object(
            "GET", self._item(id, "discover"), params={"schema": schema}, long=True
        )


class Sources(_Connections):
    path = "/sources"

    def projects(self, id: str, body: Mapping[str, Any] | None = None) -> Any:
        """Projects of a qfieldcloud or merginmaps Source."""
        return self._client._json("POST", self._item(id, "projects"), json=dict(body or {}), long=True)

    def inspect_project(self, id: str, body: Mapping[str, Any]) -> Any:
        """Inspect one project of a qfieldcloud or merginmaps Source."""
        return self._client._json(
            "POST", self._item(id, "inspect-project"), json=dict(body), long=True
        )


class Destinations(_Connections):
    path = "/destinations"
