"""Exceptions raised by the client, one class per row of the spec's mapping table.

Every exception carries ``status_code`` (``None`` when no HTTP answer was involved), ``code``
(the server's error code, or a client-side one), ``message`` and ``details`` (always a dict).
"""

from __future__ import annotations

from typing import Any

import httpx

__all__ = [
    "SvcError",
    "AuthenticationError",
    "AuthorizationError",
    "NotFoundError",
    "ValidationError",
    "NetworkError",
    "ServerError",
    "WaitTimeoutError",
    "ConfigError",
    "MissingCredentialsError",
    "LocalFileExistsError",
    "error_from_response",
]


class SvcError(Exception):
    """Base class of every error raised by :mod:`svc_client`.

    Raised as such only for an HTTP status the mapping table does not name (e.g. 405, 413).
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        code: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.code = code
        self.details: dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        parts = [p for p in (self.code, f"HTTP {self.status_code}" if self.status_code else None) if p]
        return f"{self.message} ({', '.join(parts)})" if parts else self.message

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status_code={self.status_code!r}, code={self.code!r}, "
            f"message={self.message!r})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": type(self).__name__,
            "status_code": self.status_code,
            "code": self.code,
            "message": self.message,
            "details": self.details,
        }


class AuthenticationError(SvcError):
    """HTTP 401 (invalid, expired or revoked token) or missing credentials."""


class AuthorizationError(SvcError):
    """HTTP 403: the token lacks a scope, or the caller lacks the right."""


class NotFoundError(SvcError):
    """HTTP 404: missing, owned by another user, or (``job_expired``) an expired Workspace."""


class ValidationError(SvcError):
    """HTTP 400, 409 or 422: the request was refused as invalid or conflicting."""


class NetworkError(SvcError):
    """DNS failure, refused connection, TLS failure, timeout, or a cut-off response."""


class ServerError(SvcError):
    """HTTP 5xx."""


class WaitTimeoutError(SvcError):
    """A Run did not finish within the wait timeout. ``details`` holds job_id, run_id, last_status."""


class ConfigError(SvcError):
    """Missing or invalid URL or token, or a missing or unusable local file."""


class MissingCredentialsError(ConfigError, AuthenticationError):
    """No token is configured for a route that needs one.

    It is both a :class:`ConfigError` (nothing was configured) and an
    :class:`AuthenticationError` (the spec's "missing credentials").
    """


class LocalFileExistsError(ConfigError, FileExistsError):
    """A download would replace an existing file and ``overwrite`` was not given."""


# Generic codes for answers that do not carry the JSON envelope (e.g. a proxy's HTML page or an
# unknown route), named like the server's own generic codes.
_GENERIC_CODES = {
    400: "invalid_parameter",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    422: "validation_error",
    500: "internal_error",
}


def _class_for_status(status: int) -> type[SvcError]:
    if status == 401:
        return AuthenticationError
    if status == 403:
        return AuthorizationError
    if status == 404:
        return NotFoundError
    if status in (400, 409, 422):
        return ValidationError
    if status >= 500:
        return ServerError
    return SvcError


def error_from_response(response: httpx.Response) -> SvcError:
    """Build the exception for a non-2xx response (its body must already be read)."""
    status = response.status_code
    code: str | None = None
    message: str | None = None
    details: dict[str, Any] = {}
    try:
        body = response.json()
    except (ValueError, httpx.ResponseNotRead):  # not JSON, or a body cut off mid-stream
        body = None
    if isinstance(body, dict):
        envelope = body.get("error")
        if isinstance(envelope, dict):
            code = _str_or_none(envelope.get("code"))
            message = _str_or_none(envelope.get("message"))
            if isinstance(envelope.get("details"), dict):
                details = envelope["details"]
        elif isinstance(body.get("message"), str):
            # A framework's own answer (e.g. an unknown route) rather than the envelope.
            message = body["message"]
    if code is None:
        code = _GENERIC_CODES.get(status, f"http_{status}")
    if not message:
        message = f"HTTP {status} {response.reason_phrase}".strip()
    return _class_for_status(status)(message, status_code=status, code=code, details=details)


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
