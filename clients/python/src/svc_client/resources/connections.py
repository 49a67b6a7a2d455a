"""Sources and Destinations: saved connections, with connection tests and PostGIS discovery."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .base import JSON, Collection, given_body, segment

#: The fields of a connection body, in the order they may be given positionally.
FIELDS = ("name", "type", "configuration")


def _checked(body: Mapping[str, Any]) -> JSON:
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise TypeError(f"unknown connection field(s): {', '.join(unknown)}")
    out: JSON = dict(body)
    if "configuration" in out:
        out["configuration"] = dict(out["configuration"] or {})
    return out


class _Connections(Collection):
    def create(self, body: Mapping[str, Any] | Any = None, /, *positional: Any, **fields: Any) -> JSON:
        """Save a connection: ``create({"name", "type", "configuration"})``, the same as keyword
        fields, or ``create("roads", "url", {...})`` (README, "Calling convention").
        ``configuration`` holds the type's fields, secrets included
        (``client.connectors.get(type)`` describes them); secrets are never sent back."""
        given = given_body(body, positional, FIELDS, fields) or dict(fields)
        return self._client._object("POST", self.path, json=_checked(given))

    def update(
        self,
        id: str,
        body: Mapping[str, Any] | Any = None,
        /,
        *positional: Any,
        clear_secrets: Sequence[str] = (),
        **fields: Any,
    ) -> JSON:
        """Change a saved connection.

        With a body (or positional fields), that is the whole new body (PUT); secrets it leaves
        out are kept by the server. With keyword fields only, what you leave out stays as it is:
        the saved connection is read first and your changes are laid over it: ``configuration``
        is merged into the saved public fields (a field set to ``None`` is removed, so the
        server's default applies). Secrets you leave out are kept by the server; a secret set to
        ``None``, or named in ``clear_secrets``, is removed. With a new ``type``,
        ``configuration`` is the whole new configuration and the old type's secrets are dropped.
        """
        given = given_body(body, positional, FIELDS, fields)
        if given is not None:
            whole = _checked(given)
            secrets = set(self._client.connectors.secrets(str(whole.get("type")))) if clear_secrets else set()
            for field in clear_secrets:
                if field not in secrets:
                    raise ValueError(f"{field!r} is not a secret of a {whole.get('type')} connection")
                whole.setdefault("configuration", {})[field] = None
            return self._client._object("PUT", self._item(id), json=whole)
        _checked(fields)
        name, type, configuration = fields.get("name"), fields.get("type"), fields.get("configuration")
        saved = self.get(id)
        new_type = type or str(saved.get("type"))
        secrets = set(self._client.connectors.secrets(new_type))
        merged: dict[str, Any] = {}
        if new_type == saved.get("type"):
            hidden = {f"has_{field}" for field in secrets}
            public = saved.get("configuration") or {}
            merged.update({k: v for k, v in public.items() if k not in hidden})
        merged.update(configuration or {})
        for field in clear_secrets:
            if field not in secrets:
                raise ValueError(f"{field!r} is not a secret of a {new_type} connection")
            merged[field] = None
        # None: a secret is cleared (the API's null); any other field is left to its default.
        body_config = {k: v for k, v in merged.items() if v is not None or k in secrets}
        whole = {"name": name or saved.get("name"), "type": new_type, "configuration": body_config}
        return self._client._object("PUT", self._item(id), json=whole)

    def test(self, id: str) -> JSON:
        """Test a saved connection: ``{ok, status, message, tried, duration_ms}``.

        A connection that fails is a result (``ok`` false, ``status`` says why), not an error.
        """
        return self._client._object("POST", self._item(id, "test"), long=True)

    def test_draft(
        self, type: str, configuration: Mapping[str, Any], name: str | None = None
    ) -> JSON:
        """Test an unsaved connection (nothing is stored); the same result as :meth:`test`."""
        body: dict[str, Any] = {"type": type, "configuration": dict(configuration)}
        if name is not None:
            body["name"] = name
        return self._client._object("POST", f"{self.path}/test", json=body, long=True)

    def discover(self, id: str, schema: str | None = None) -> JSON:
        """PostGIS discovery: the schemas, or with ``schema`` that schema's tables and views."""
        return self._client._object(
            "GET", self._item(id, "discover"), params={"schema": schema}, long=True
        )

    def geoserver_workspaces(self, id: str) -> JSON:
        """The workspaces of a GeoServer connection: ``{"items": [{"name"}]}``."""
        return self._client._object("GET", self._item(id, "geoserver", "workspaces"), long=True)

    def geoserver_stores(self, id: str, workspace: str) -> JSON:
        """The data stores of one workspace of a GeoServer connection."""
        return self._client._object(
            "GET", self._item(id, "geoserver", "workspaces", segment(workspace), "stores"), long=True
        )

    def geoserver_layers(self, id: str, workspace: str) -> JSON:
        """The layers of one workspace of a GeoServer connection (``name``, ``qualified_name``)."""
        return self._client._object(
            "GET", self._item(id, "geoserver", "workspaces", segment(workspace), "layers"), long=True
        )

    def geonode_datasets(
        self, id: str, search: str | None = None, page: int = 1, page_size: int = 20
    ) -> JSON:
        """Datasets of a GeoNode connection, GeoNode's own search and paging:
        ``{"items": [{"id", "name", "alternate", "title", "page_url"}], "total", "page", "page_size"}``."""
        return self._client._object(
            "GET",
            self._item(id, "geonode", "datasets"),
            params={"search": search, "page": page, "page_size": page_size},
            long=True,
        )

    def hub_items(
        self, id: str, q: str | None = None, *, owner_only: bool = False, start: int = 1, num: int = 20
    ) -> JSON:
        """Search the portal of a hub connection (newest first): ``{total, start, next_start, items}``.

        ``q`` is the portal's search syntax (``parcels``, ``type:"Feature Service"``,
        ``owner:gis_team``); pass ``start=next_start`` for the next page.
        """
        params = {"q": q, "owner_only": "true" if owner_only else None, "start": start, "num": num}
        return self._client._object("GET", self._item(id, "hub", "items"), params=params, long=True)

    def hub_folders(self, id: str) -> JSON:
        """The signed-in user's folders on the portal of a hub connection."""
        return self._client._object("GET", self._item(id, "hub", "folders"), long=True)

    def hub_layers(self, id: str, item_id: str) -> JSON:
        """The layers and tables of a feature layer item on the portal of a hub connection."""
        return self._client._object("GET", self._item(id, "hub", "items", segment(item_id), "layers"), long=True)


class Sources(_Connections):
    """``client.sources``: where data comes from."""

    path = "/sources"

    def projects(self, id: str) -> list[JSON]:
        """The projects a qfieldcloud or merginmaps Source can see:
        ``[{id, name, owner, description, updated, version}]``. Each ``id`` is what a Job's
        ``source_resource["project"]`` takes. Other types answer ``invalid_source``."""
        answer = self._client._json("POST", self._item(id, "projects"), json={}, long=True)
        return list(answer.get("items", [])) if isinstance(answer, dict) else list(answer)

    def inspect_project(
        self, id: str, project: str | Mapping[str, Any], *, version: str | None = None
    ) -> JSON:
        """A project's files and, for each vector file, its layers (geometry type, CRS, feature
        count): ``{project, version, versions, files: [{name, size, checksum, updated, layers}]}``.

        ``project`` is an id from :meth:`projects`; ``version`` picks a Mergin Maps project
        version (default the latest). The server downloads the vector files to read them, so
        this may take a while for large projects.
        """
        body: dict[str, Any] = dict(project) if isinstance(project, Mapping) else {"project": project}
        if version is not None:
            body["version"] = version
        return self._client._object("POST", self._item(id, "inspect-project"), json=body, long=True)


class Destinations(_Connections):
    """``client.destinations``: where results are delivered."""

    path = "/destinations"
