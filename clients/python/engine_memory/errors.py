"""The server's application/problem+json answers, raised as typed exceptions."""

from __future__ import annotations

from typing import Any, Dict, Optional


class EngineError(Exception):
    """An answer of the memory server that is not a success.

    ``status`` is the HTTP status, ``detail`` the server's one-line message
    (the one the CLI prints), ``problem`` the whole RFC 9457 document.
    """

    def __init__(self, status: int, detail: str, problem: Optional[Dict[str, Any]] = None):
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail
        self.problem: Dict[str, Any] = problem or {}


class BadRequest(EngineError):
    """400: bad input; the detail names the problem."""


class Unauthorized(EngineError):
    """401: no token, or not the server's (TCP listeners need one)."""


class Forbidden(EngineError):
    """403: a cross-origin request refused."""


class NotFound(EngineError):
    """404: no such record, or no such route."""


class RequestTimeout(EngineError):
    """408: the request body stalled."""


class PayloadTooLarge(EngineError):
    """413: the body is over the route's limit."""


class UnsupportedMediaType(EngineError):
    """415: the wrong Content-Type."""


class Busy(EngineError):
    """503: the memory lock or the request's deadline ran out; retry."""


class ServerError(EngineError):
    """500 and any other status: the server failed."""


class Unreachable(EngineError):
    """Status 0: no answer at all.

    Nothing listens at the address (the server is not running, or the
    socket's path is wrong), or the server was silent past the client's
    timeout; the message names the address and the cause.
    """

    def __init__(self, detail: str):
        super().__init__(0, detail)
        self.args = (detail,)

    def __str__(self) -> str:
        return self.detail


_BY_STATUS = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    408: RequestTimeout,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    503: Busy,
}


def error_for(status: int, detail: str, problem: Optional[Dict[str, Any]] = None) -> EngineError:
    """The exception of an answer's status."""
    return _BY_STATUS.get(status, ServerError)(status, detail, problem)
