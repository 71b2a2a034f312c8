"""Agents' moves under a deadline: each decision runs under the watchdog, which interrupts a
move that runs too long, whose client left or whose server stops (:class:`Work` is one
request's share of agent time).
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any

from rummy_agents.arena.registry import AGENTS, GAME_AGENTS, split_spec
from rummy_agents.web.limits import REQUEST_SECONDS


class _Interrupted(BaseException):
    """Raised inside a worker thread to stop an agent's move (a ``BaseException``, as
    ``KeyboardInterrupt``: an agent's ``except Exception`` does not swallow it).
    """


class AgentStopped(Exception):
    """An agent's move was interrupted: ``deadline`` true when it ran past its time, false when
    its request was cancelled (the client left, the server stops); ``reason`` says which.
    """

    def __init__(self, reason: str, deadline: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.deadline = deadline


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in the thread ``thread_id`` at its next Python instruction (``None``: forget
    one raised and not yet delivered). Compiled kernels run to their end first: the agents'
    cost limits keep each one short.
    """
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), None if exc is None else ctypes.py_object(exc)
    )


class Work:
    """One request's agent work: the moves it may play until ``deadline`` (monotonic time), and
    its cancellation (the client left, the server stops).
    """

    def __init__(self, seconds: float = REQUEST_SECONDS) -> None:
        self.deadline = time.monotonic() + seconds
        self.cancelled: str | None = None

    def cancel(self, reason: str) -> None:
        """Stop the work: the move being computed is interrupted at once."""
        if self.cancelled is None:
            self.cancelled = reason
        _WATCHDOG.wake()

    @property
    def out_of_time(self) -> bool:
        """The request has played agents' moves for as long as it may."""
        return time.monotonic() >= self.deadline


@dataclasses.dataclass
class _Call:
    thread: int
    deadline: float
    seconds: float
    work: Work
    reason: str | None = None
    fired: float = 0.0
    active: bool = True


class _Watchdog:
    """One daemon thread that interrupts the agent moves (:meth:`call`) past their deadline or
    whose :class:`Work` was cancelled.
    """

    REFIRE_SECONDS = 1.0
    """An interrupt is raised again this often while the move still runs (in case agent code
    caught it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # a C lock: an interrupt cannot land inside its __enter__
        self.event = threading.Event()
        self.calls: dict[int, _Call] = {}
        self.thread: threading.Thread | None = None

    def wake(self) -> None:
        self.event.set()

    def active(self) -> int:
        """Agent moves running now."""
        with self.lock:
            return len(self.calls)

    def call(self, fn: Callable[[], Any], seconds: float, work: Work) -> Any:
        """``fn()`` in this thread, interrupted when it runs ``seconds`` or ``work`` is
        cancelled.

        Raises:
            AgentStopped: when it was interrupted.
        """
        if work.cancelled is not None:
            raise AgentStopped(work.cancelled, False)
        c = _Call(threading.get_ident(), time.monotonic() + seconds, seconds, work)
        with self.lock:
            self.calls[c.thread] = c
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._run, name="rummy-env serve watchdog", daemon=True
                )
                self.thread.start()
        self.event.set()
        try:
            try:
                return fn()
            finally:
                self._leave(c)
        except _Interrupted:
            self._leave(c)
            raise AgentStopped(c.reason or "interrupted", c.reason == "deadline") from None

    def _leave(self, c: _Call) -> None:
        """Forget the call and any interrupt raised for it and not yet delivered (an interrupt
        landing here is caught and the forgetting done again).
        """
        while True:
            try:
                with self.lock:
                    if self.calls.get(c.thread) is c:
                        del self.calls[c.thread]
                    if c.active and c.fired:
                        _raise_in(c.thread, None)
                    c.active = False
                return
            except _Interrupted:
                continue

    def _run(self) -> None:
        while True:
            self.event.wait(0.05 if self.calls else 1.0)
            self.event.clear()
            now = time.monotonic()
            with self.lock:
                for c in self.calls.values():
                    reason = c.work.cancelled or ("deadline" if now >= c.deadline else None)
                    if reason is None or now - c.fired < self.REFIRE_SECONDS:
                        continue
                    c.reason = c.reason or reason
                    c.fired = now
                    _raise_in(c.thread, _Interrupted)


_WATCHDOG = _Watchdog()


_WARM: set[tuple[str, str]] = set()
"""(game, agent class) whose first decision this process has played (kernels compiled)."""


def agent_key(spec: str, game: str) -> tuple[str, str]:
    """(game, agent class) of an agent spec: the first decision of each is given longer."""
    name, _ = split_spec(spec)
    try:
        return game, _lookup_target(name, game)
    except ValueError:
        return game, name


def _lookup_target(name: str, game: str) -> str:
    entry = GAME_AGENTS.get(game, {}).get(name) or AGENTS.get(name)
    if entry is None:
        raise ValueError(name)
    return entry.target


def decide(fn: Callable[[], Any], work: Work, key: tuple[str, str], move_seconds: float,
           first_seconds: float) -> Any:  # fmt: skip
    """An agent's decision ``fn()`` under its deadline: ``first_seconds`` for the first one of
    an agent class in a game in this process, else ``move_seconds``.

    Raises:
        AgentStopped: past the deadline, or when ``work`` is cancelled.
    """
    seconds = move_seconds if key in _WARM else max(move_seconds, first_seconds)
    out = _WATCHDOG.call(fn, seconds, work)
    _WARM.add(key)
    return out


def is_warm(key: tuple[str, str]) -> bool:
    """Whether this process has played a first decision of ``key`` = (game, agent class)."""
    return key in _WARM


def agent_moves_running() -> int:
    """Agent moves running now in this process (every app together)."""
    return _WATCHDOG.active()
