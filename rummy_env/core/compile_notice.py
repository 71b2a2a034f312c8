"""One line on stderr when numba compiles the package's kernels for long.

The first call of a kernel with an empty numba cache compiles it and everything it calls:
seconds to tens of seconds per game on a small machine, during which a progress bar or a
``reset()`` sits still. A listener on numba's ``numba:compile`` event watches each outermost
compile of a ``rummy_env`` or ``rummy_agents`` function; if it is still running after
``NOTICE_AFTER`` seconds (env var ``RUMMY_ENV_COMPILE_NOTICE``: the delay in seconds, ``off``
for no notice), it prints one line naming the game, for example::

    rummy_env: compiling the Rummy 51 kernels, first run only (cached on disk after), about 25 s

A compile that finishes sooner prints nothing, loads from the cache print nothing, and each
line is printed once per process (the estimate covers the game's later compiles). The
estimate is what a whole first run of that game compiles on the 2-core development machine
(``GAME_SECONDS``); one compile may need less.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from typing import Any

from numba.core import event

NOTICE_AFTER = 2.0
"""Seconds a compile runs before the notice is printed."""

ENV_VAR = "RUMMY_ENV_COMPILE_NOTICE"

GAME_NAMES = {"gin_rummy": "Gin Rummy", "five_hundred_rum": "500 Rum", "rummy51": "Rummy 51"}

GAME_SECONDS = {"gin_rummy": 40, "five_hundred_rum": 50, "rummy51": 55}
AGENT_SECONDS = "5-50"
"""Seconds a rule agent's compiled decisions take to compile, for a compile not tied to one
game (the arena's batched decisions: ``random`` about 3 s, Gin's ``simple`` about 7, the joker
games' ``greedy`` up to 48 on the 2-core development machine, 2026-11-29)."""
"""Seconds an empty cache takes to compile what a game's Gymnasium env needs before its first
step (its kernels and its rule opponent's, played compiled inside the env's loop) on the
2-core development machine (``experiments/benchmark.py``'s cold start rows, 2026-11-28: 40,
51 and 55 s); the AEC env alone needs less."""

RECORD_GAMES: dict[tuple[str, ...], str] = {}
"""Record field names -> game, filled by ``core.batch.register`` (the batch entry points are
compiled for a game's records, which name the game)."""

_AGENT_GAMES = {
    "gin": "gin_rummy",
    "five_hundred": "five_hundred_rum",
    "rummy51": "rummy51",
    "joker": "five_hundred_rum",
}


def _delay() -> float | None:
    raw = os.environ.get(ENV_VAR, "")
    if raw.strip().lower() in ("off", "none", "no", "false"):
        return None
    try:
        return float(raw) if raw.strip() else NOTICE_AFTER
    except ValueError:
        return NOTICE_AFTER


def game_of(module: str, args: Any) -> str | None:
    """The game a compile is for: from the module (``rummy_env.rules.<game>...``, an agent
    module naming it) or the record type among the arguments (the batch entry points).
    """
    parts = module.split(".")
    if len(parts) > 2 and parts[:2] == ["rummy_env", "rules"] and parts[2] in GAME_NAMES:
        return parts[2]
    for arg in args or ():
        dtype = getattr(arg, "dtype", arg)
        fields = getattr(dtype, "fields", None)
        if isinstance(fields, Mapping):
            game = RECORD_GAMES.get(tuple(fields))
            if game is not None:
                return game
    if parts[0] == "rummy_agents":
        for key, game in _AGENT_GAMES.items():
            if key in module:
                return game
    return None


def notice_text(game: str | None, module: str) -> str:
    """The line printed for a long compile of ``game`` (None: not one game's)."""
    if game is None:
        if module.startswith("rummy_agents"):
            return (
                "rummy_env: compiling the agents' kernels, first run only (cached on disk "
                f"after), about {AGENT_SECONDS} s"
            )
        return "rummy_env: compiling rummy_env's kernels, first run only (cached on disk after)"
    return (
        f"rummy_env: compiling the {GAME_NAMES[game]} kernels, first run only (cached on disk "
        f"after), about {GAME_SECONDS[game]} s"
    )


class CompileNotice(event.Listener):
    """The ``numba:compile`` listener (one per process, installed by :func:`install`)."""

    def __init__(self, delay: float, stream: Any = None) -> None:
        self.delay = delay
        self.stream = stream
        self.depth = 0
        self.timer: threading.Timer | None = None
        self.lock = threading.Lock()
        self.printed: list[str] = []  # what was printed (for tests)

    def on_start(self, ev: Any) -> None:
        """A compile begins: arm the notice if it is an outermost compile of ours."""
        with self.lock:
            self.depth += 1
            if self.depth != 1:
                return
            module = getattr(ev.data["dispatcher"].py_func, "__module__", "") or ""
            if not module.startswith(("rummy_env", "rummy_agents")):
                return
            text = notice_text(game_of(module, ev.data.get("args")), module)
            if text in self.printed:  # once per game and process: the estimate covers the rest
                return
            self.timer = threading.Timer(self.delay, self._say, (text,))
            self.timer.daemon = True
            self.timer.start()

    def on_end(self, ev: Any) -> None:
        """A compile ends: disarm the notice when the outermost one is done."""
        with self.lock:
            self.depth = max(0, self.depth - 1)
            if self.depth == 0 and self.timer is not None:
                self.timer.cancel()
                self.timer = None

    def _say(self, text: str) -> None:
        with self.lock:
            if self.timer is None:  # finished meanwhile
                return
        stream = self.stream or sys.stderr
        print(text, file=stream, flush=True)
        self.printed.append(text)


_INSTALLED: CompileNotice | None = None


def install() -> CompileNotice | None:
    """Register the listener once per process (None when the notice is turned off)."""
    global _INSTALLED
    if _INSTALLED is not None:
        return _INSTALLED
    delay = _delay()
    if delay is None:
        return None
    _INSTALLED = CompileNotice(delay)
    event.register("numba:compile", _INSTALLED)
    return _INSTALLED


__all__ = ["CompileNotice", "GAME_SECONDS", "NOTICE_AFTER", "game_of", "install", "notice_text"]
