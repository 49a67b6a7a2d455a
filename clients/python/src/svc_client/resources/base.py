"""What every collection shares: list over all pages, one page, get, delete."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence, TypedDict
from urllib.parse import quote

if TYPE_CHECKING:
    from ..client import Client

JSON = dict[str, Any]
JSONList = list[JSON]  # module-level: inside a class, `list` names the method


class Page(TypedDict):
    """One page of a list: pass ``next_cursor`` back as ``cursor`` for the next (None: no more)."""

    items: list[JSON]
    next_cursor: str | None


def segment(value: str) -> str:
    """An id as one path segment; never lets an id reach another route."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"an id must be a non-empty string, got {value!r}")
    return quote(value, safe="")


def given_body(
    body: Mapping[str, Any] | Any | None,
    positional: Sequence[Any],
    names: Sequence[str],
    fields: Mapping[str, Any],
) -> dict[str, Any] | None:
    """The one calling convention of every ``create`` and ``update`` (README, "Calling convention").

    A call gives a body mapping, keyword fields, or both (keyword fields win); a collection whose
    fields have a natural order (``name, type, configuration``) also takes them positionally,
    and then ``body`` is the first of them. Returns the whole body so given, or ``None`` when
    only keyword fields were given (for ``update``: change just those fields).
    """
    if body is not None and not isinstance(body, Mapping):
        positional = (body, *positional)
        body = None
    if len(positional) > len(names):
        raise TypeError(f"at most {len(names)} positional fields ({', '.join(names)}), got {len(positional)}")
    if body is None and not positional:
        return None
    merged: dict[str, Any] = dict(body or {})
    merged.update(zip(names, positional))
    merged.update(fields)
    return merged


class Collection:
    """A collection under ``/api/v1/<name>``."""

    path: str = ""

    def __init__(self, client: Client) -> None:
        self._client = client

    def _item(self, id: str, *rest: str) -> str:
        return "/".join((self.path, segment(id), *rest))

    def iter(self, *, page_size: int | None = None) -> Iterator[JSON]:
        """Lazily yield every item, fetching the next page when needed."""
        return self._client._paginate(self.path, page_size=page_size)

    def list(self, *, page_size: int | None = None) -> JSONList:
        """Every item, all pages followed (``page_size`` is the ``limit`` of each request)."""
        return list(self.iter(page_size=page_size))

    def page(self, *, limit: int | None = None, cursor: str | None = None) -> Page:
        """One page, newest first: ``{"items": [...], "next_cursor": "..." | None}``."""
        return self._client._page(self.path, limit=limit, cursor=cursor)

    def get(self, id: str) -> JSON:
        return self._client._object("GET", self._item(id))

    def delete(self, id: str) -> None:
        self._client._request("DELETE", self._item(id))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"
