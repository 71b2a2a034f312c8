"""The checks of a request before any work: its ``Host``, its origin (a page of another site
is refused), its content type, and its body (size, memory, strict JSON, nesting depth).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request

from rummy_agents.web.errors import ApiError, one_line
from rummy_agents.web.limits import MAX_BODY_BYTES, MAX_JSON_DEPTH
from rummy_agents.web.memory import BODY_BYTES_PER_BYTE, Memory

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
"""Methods that change nothing; every other one must come from the app's own page (or a client
that sends no ``Origin``) as ``Content-Type: application/json``."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _depth(value: Any, limit: int) -> int:
    """The nesting depth of a JSON value (arrays and objects), counted up to ``limit + 1``
    (without recursion: a deep value cannot overflow the stack here).
    """
    deepest = 0
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def parse_body(raw: bytes) -> Any:
    """A request body's JSON value (None for an empty body): strict JSON (no ``NaN`` or
    ``Infinity``), nested at most :data:`MAX_JSON_DEPTH` deep.

    Raises:
        ApiError: 400 naming the problem.
    """
    if not raw.strip():
        return None
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise ApiError(
            400, f"the request body is nested too deeply (at most {MAX_JSON_DEPTH} levels)"
        ) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError(400, f"the request body is not JSON: {one_line(e, 200)}") from None
    if _depth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise ApiError(
            400, f"the request body is nested too deeply (at most {MAX_JSON_DEPTH} levels)"
        )
    return value


async def read_body(request: Request, memory: Memory, key: int) -> Any:
    """The request's JSON body (None for none), its memory held under ``key`` while it is read.

    Raises:
        ApiError: 413 for a body over :data:`MAX_BODY_BYTES`, 400 for one that is not JSON or is
            nested too deeply, 429 when the app's memory has no room for it.
    """
    size = request.headers.get("content-length")
    if size is not None and size.isdigit() and int(size) > MAX_BODY_BYTES:
        raise ApiError(413, f"the request is over {MAX_BODY_BYTES} bytes")
    chunks = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > MAX_BODY_BYTES:
            raise ApiError(413, f"the request is over {MAX_BODY_BYTES} bytes")
        if chunk:
            memory.set(key, BODY_BYTES_PER_BYTE * total, "the request body")
        chunks.append(chunk)
    return parse_body(b"".join(chunks))


def json_object(body: Any) -> dict[str, Any]:
    """A request body that must be a JSON object ({} for none).

    Raises:
        ApiError: 400 for a body of another type.
    """
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


def host_name(value: str) -> str:
    """The host of a ``Host`` header, without its port and brackets."""
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _netloc(scheme: str, netloc: str) -> str:
    """``host:port`` lowercased, the scheme's default port left out."""
    netloc = netloc.lower()
    default = {"http": ":80", "https": ":443"}.get(scheme.lower(), "")
    return netloc[: -len(default)] if default and netloc.endswith(default) else netloc


def foreign_origin(headers: Mapping[str, str], scheme: str = "http") -> str | None:
    """Why a state-changing request is refused as sent by another site's page (None: it is
    not): ``Sec-Fetch-Site`` other than ``same-origin`` or ``none``, or an ``Origin`` other
    than the server's own (its scheme, host and port; ``null`` included). A client that sends
    neither (curl, scripts) is not a page of another site.
    """
    site = headers.get("sec-fetch-site")
    if site is not None and site.strip().lower() not in ("same-origin", "none"):
        return f"Sec-Fetch-Site: {site.strip()[:40]}"
    origin = headers.get("origin")
    if origin is None:
        return None
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        parts = None
    own = _netloc(scheme, headers.get("host", ""))
    if (
        parts is None
        or parts.scheme.lower() not in ("http", "https")
        or not parts.netloc
        or parts.scheme.lower() != scheme.lower()
        or parts.path not in ("", "/")
        or _netloc(parts.scheme, parts.netloc) != own
    ):
        return f"Origin: {origin.strip()[:80]}"
    return None


def is_json(content_type: str | None) -> bool:
    """Whether a ``Content-Type`` is ``application/json`` (parameters such as charset aside)."""
    return (content_type or "").split(";", 1)[0].strip().lower() == "application/json"
