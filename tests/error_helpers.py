"""Checks of the errors users see: the CLI's one line and the web app's JSON answer."""

from __future__ import annotations

from typing import Any

import pytest

from rummy_agents.cli import PROG


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The CLI's error output, checked to be one ``rummy-env: error:`` line and nothing else."""
    cap = capsys.readouterr()
    assert cap.out == ""
    lines = cap.err.splitlines()
    assert len(lines) == 1, cap.err
    assert lines[0].startswith(f"{PROG}: error: "), lines[0]
    assert "Traceback" not in cap.err
    return lines[0]


def expect_error(r: Any, status: int, *words: str) -> None:
    """A web app answer ``r`` is ``status`` with a JSON error holding ``words``, no traceback."""
    assert r.status_code == status, (r.status_code, r.text)
    message = r.json()["error"]
    for w in words:
        assert w in message, (w, message)
    assert "Traceback" not in message
