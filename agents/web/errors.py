"""The error a request is refused with (:class:`ApiError`: a status and a one-line message),
and exceptions' text on one line for those messages.
"""

from __future__ import annotations


class ApiError(Exception):
    """A request the app refuses: answered as ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = " ".join(message.split())


def one_line(e: BaseException, limit: int = 500) -> str:
    """An exception's text on one line, cut at ``limit`` characters."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
