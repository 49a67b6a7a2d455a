"""The :class:`Client`: one HTTPS session to an installation's ``/api/v1``."""

from __future__ import annotations

import contextlib
import logging
import platform
import time
from typing import Any, Callable, Iterator, Mapping

import httpx

from . import __version__
from .config import resolve
from .errors import (
    MissingCredentialsError,
    NetworkError,
    ServerError,
    SvcError,
    error_from_response,
)
from .resources.base import Page
from .resources.catalogs import Connectors, Formats, Transformations
from .resources.connections import Destinations, Sources
from .resources.jobs import Jobs
from .resources.recipes import Recipes
from .resources.schedules import Schedules
from .workspaces import Workspaces

__all__ = ["Client", "API_PREFIX"]

API_PREFIX = "/api/v1"
log = logging.getLogger("svc_client")

Params = Mapping[str, Any]


class Client:
    """Client of one installation.

    ``url`` is the installation origin (``https://gis.example.org``), never ending in ``/api/v1``.
    ``url`` and ``token`` fall back to ``SVC_URL`` / ``SVC_TOKEN``, then to the configuration saved
    by ``svc auth login``. ``timeout`` applies to ordinary requests; ``run_timeout`` to upload,
    previews, convert, deliver, download, and to waiting for a Run.

    Plain ``http`` is accepted only for a loopback host, or with ``allow_http=True``.
    ``transport`` is handed to :class:`httpx.Client` (tests pass an :class:`httpx.MockTransport`).
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        timeout: float = 30,
        run_timeout: float = 600,
        *,
        allow_http: bool = False,
        transport: httpx.BaseTransport | None = None,
        poll_interval: float = 0.5,
        max_poll_interval: float = 2.0,
    ) -> None:
        settings = resolve(url, token, allow_http=allow_http)
        self.url: str = settings.url
        self.api_url: str = settings.url + API_PREFIX
        self.__token = settings.token
        self.timeout = float(timeout)
        self.run_timeout = float(run_timeout)
        self.poll_interval = float(poll_interval)
        self.max_poll_interval = float(max_poll_interval)
        # Replaceable in tests so that waiting does not really sleep.
        self._sleep: Callable[[float], None] = time.sleep
        self._clock: Callable[[], float] = time.monotonic
        self._http = httpx.Client(
            base_url=self.api_url,
            timeout=self.timeout,
            transport=transport,
            follow_redirects=False,
            headers={
                "Accept": "application/json",
                "User-Agent": (
                    f"svc-client/{__version__} python/{platform.python_version()} "
                    f"httpx/{httpx.__version__}"
                ),
            },
        )
        self.sources = Sources(self)
        self.destinations = Destinations(self)
        self.jobs = Jobs(self)
        self.recipes = Recipes(self)
        self.schedules = Schedules(self)
        self.workspaces = Workspaces(self)
        self.transformations = Transformations(self)
        self.formats = Formats(self)
        self.connectors = Connectors(self)

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def __repr__(self) -> str:
        return f"Client(url={self.url!r}, token={'set' if self.__token else 'none'})"

    @property
    def has_token(self) -> bool:
        return self.__token is not None

    # -- top-level calls ---------------------------------------------------------------------

    def me(self) -> dict[str, Any]:
        """The token owner's profile (``GET /api/v1/auth/me``)."""
        return self._object("GET", "/auth/me")

    def system(self) -> dict[str, Any]:
        """Non-sensitive runtime capabilities (``GET /api/v1/system``, no token needed)."""
        return self._object("GET", "/system", auth=False)

    # -- HTTP plumbing used by the resources -------------------------------------------------

    def _headers(self, auth: bool, extra: Mapping[str, str] | None) -> dict[str, str]:
        headers = dict(extra or {})
        if auth:
            if self.__token is None:
                raise MissingCredentialsError(
                    "no token: pass token=, set SVC_TOKEN, or run `svc auth login`",
                    code="missing_token",
                )
            headers["Authorization"] = f"Bearer {self.__token}"
        return headers

    def _send(self, request: httpx.Request, *, stream: bool = False) -> httpx.Response:
        label = f"{request.method} {request.url.path}"
        try:
            response = self._http.send(request, stream=stream)
        except httpx.TimeoutException as exc:
            raise NetworkError(
                f"{label}: timed out ({type(exc).__name__})", code="timeout"
            ) from None
        except httpx.RequestError as exc:  # transport failures, undecodable bodies
            raise NetworkError(
                f"{label}: request to {self.url} failed: {exc or type(exc).__name__}",
                code="network_error",
            ) from None
        log.debug("%s -> %s", label, response.status_code)
        if response.is_success:
            return response
        if stream:
            try:
                response.read()
            except httpx.RequestError:
                pass  # the status alone still says what went wrong
            finally:
                response.close()
        if response.is_redirect:
            raise SvcError(
                f"{label}: the server redirected to {response.headers.get('location')!r}; "
                "check the URL (https, host, path prefix)",
                status_code=response.status_code,
                code="unexpected_redirect",
            )
        raise error_from_response(response)

    def _build(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        json: Any = None,
        files: Any = None,
        headers: Mapping[str, str] | None = None,
        auth: bool = True,
        long: bool = False,
    ) -> httpx.Request:
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        return self._http.build_request(
            method,
            path,
            params=clean or None,
            json=json,
            files=files,
            headers=self._headers(auth, headers),
            timeout=self.run_timeout if long else self.timeout,
        )

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self._send(self._build(method, path, **kwargs))

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._request(method, path, **kwargs)
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise ServerError(
                f"{method} {path}: the server answered with something other than JSON",
                status_code=response.status_code,
                code="invalid_response",
            ) from None

    def _object(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """A request whose answer must be a JSON object."""
        data = self._json(method, path, **kwargs)
        if not isinstance(data, dict):
            raise ServerError(
                f"{method} {path}: expected a JSON object", code="invalid_response"
            )
        return data

    @contextlib.contextmanager
    def _stream(self, method: str, path: str, **kwargs: Any) -> Iterator[httpx.Response]:
        response = self._send(self._build(method, path, **kwargs), stream=True)
        try:
            yield response
        finally:
            response.close()

    def _page(self, path: str, *, limit: int | None = None, cursor: str | None = None) -> Page:
        """One ``{items, next_cursor}`` page of a list."""
        data = self._json("GET", path, params={"limit": limit, "cursor": cursor})
        if isinstance(data, list):  # tolerate an unpaginated list
            return {"items": data, "next_cursor": None}
        if not isinstance(data, dict) or not isinstance(data.get("items"), list):
            raise ServerError(f"GET {path}: expected {{items, next_cursor}}", code="invalid_response")
        next_cursor = data.get("next_cursor")
        if not isinstance(next_cursor, str) or not next_cursor:
            next_cursor = None
        return {"items": data["items"], "next_cursor": next_cursor}

    def _paginate(self, path: str, *, page_size: int | None = None) -> Iterator[dict[str, Any]]:
        """Every item of a ``{items, next_cursor}`` list, following ``next_cursor`` page by page."""
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            page = self._page(path, limit=page_size, cursor=cursor)
            yield from page["items"]
            cursor = page["next_cursor"]
            if not cursor:
                return
            if cursor in seen:
                raise ServerError(
                    f"GET {path}: the server repeated a pagination cursor", code="invalid_response"
                )
            seen.add(cursor)
