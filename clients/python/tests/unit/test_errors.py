"""The spec's "Client library exception mapping" table, row by row."""

from __future__ import annotations

import ssl

import httpx
import pytest

from svc_client import (
    AuthenticationError,
    AuthorizationError,
    Client,
    ConfigError,
    MissingCredentialsError,
    NetworkError,
    NotFoundError,
    ServerError,
    SvcError,
    ValidationError,
)
from svc_client.errors import error_from_response

from .conftest import TOKEN, URL, FakeServer, envelope


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (401, "unauthorized", AuthenticationError),
        (403, "forbidden", AuthorizationError),
        (404, "recipe_not_found", NotFoundError),
        (404, "job_expired", NotFoundError),
        (400, "invalid_parameter", ValidationError),
        (409, "conflict", ValidationError),
        (409, "job_not_ready", ValidationError),
        (422, "validation_error", ValidationError),
        (500, "internal_error", ServerError),
        (502, "bad_gateway", ServerError),
        (503, "unavailable", ServerError),
    ],
)
def test_status_maps_to_exception_with_all_fields(
    server: FakeServer, client: Client, status: int, code: str, cls: type[SvcError]
) -> None:
    details = {"issues": [{"path": "name", "message": "required"}]}
    server.on("GET", "/recipes/rcp_1", envelope(status, code, "it went wrong", details))

    with pytest.raises(cls) as caught:
        client.recipes.get("rcp_1")

    error = caught.value
    assert type(error) is cls
    assert error.status_code == status
    assert error.code == code
    assert error.message == "it went wrong"
    assert error.details == details
    assert "it went wrong" in str(error) and code in str(error)


def test_unlisted_status_is_the_base_error(server: FakeServer, client: Client) -> None:
    server.on("GET", "/recipes", envelope(405, "method_not_allowed"))
    with pytest.raises(SvcError) as caught:
        client.recipes.list()
    assert type(caught.value) is SvcError
    assert caught.value.status_code == 405


def test_body_without_envelope_gets_a_generic_code() -> None:
    response = httpx.Response(404, json={"message": "Route GET:/api/v1/jobs not found", "statusCode": 404})
    error = error_from_response(response)
    assert isinstance(error, NotFoundError)
    assert error.code == "not_found"
    assert error.message == "Route GET:/api/v1/jobs not found"
    assert error.details == {}


def test_html_error_page_still_maps_by_status() -> None:
    error = error_from_response(httpx.Response(502, text="<html>Bad gateway</html>"))
    assert isinstance(error, ServerError)
    assert error.code == "http_502"
    assert error.message == "HTTP 502 Bad Gateway"


def test_details_that_are_not_an_object_become_empty() -> None:
    error = error_from_response(httpx.Response(422, json={"error": {"code": "x", "message": "m", "details": [1]}}))
    assert error.details == {}


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (httpx.ConnectError("[Errno 111] Connection refused"), "network_error"),
        (httpx.ConnectError("[Errno -2] Name or service not known"), "network_error"),
        (httpx.ConnectError(str(ssl.SSLCertVerificationError("certificate verify failed"))), "network_error"),
        (httpx.ConnectTimeout("timed out"), "timeout"),
        (httpx.ReadTimeout("timed out"), "timeout"),
        (httpx.RemoteProtocolError("peer closed connection"), "network_error"),
    ],
)
def test_transport_failures_are_network_errors(exc: Exception, code: str) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise exc

    with Client(url=URL, token=TOKEN, transport=httpx.MockTransport(fail)) as client:
        with pytest.raises(NetworkError) as caught:
            client.recipes.list()
    assert caught.value.code == code
    assert caught.value.status_code is None
    assert TOKEN not in str(caught.value)


def test_missing_token_is_both_config_and_authentication_error(server: FakeServer) -> None:
    with Client(url=URL, transport=server.transport()) as client:
        with pytest.raises(MissingCredentialsError) as caught:
            client.me()
    assert isinstance(caught.value, ConfigError)
    assert isinstance(caught.value, AuthenticationError)
    assert server.requests == []


def test_redirect_is_not_followed(server: FakeServer, client: Client) -> None:
    server.on("GET", "/auth/me", httpx.Response(301, headers={"location": "https://elsewhere.test/api/v1/auth/me"}))
    with pytest.raises(SvcError) as caught:
        client.me()
    assert caught.value.code == "unexpected_redirect"
    assert len(server.requests) == 1


def test_to_dict_for_scripts() -> None:
    error = NotFoundError("gone", status_code=404, code="job_not_found", details={"id": "ws_1"})
    assert error.to_dict() == {
        "type": "NotFoundError",
        "status_code": 404,
        "code": "job_not_found",
        "message": "gone",
        "details": {"id": "ws_1"},
    }
