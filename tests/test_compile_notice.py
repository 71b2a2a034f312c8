"""A long first-run compile says so on stderr, in one line naming the game (issue: no silent
first run); quick compiles and cache loads say nothing.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import numpy as np

from rummy_env.core import compile_notice as cn


def _event(module: str, args: tuple = ()) -> SimpleNamespace:
    fn = SimpleNamespace(__module__=module)
    return SimpleNamespace(data={"dispatcher": SimpleNamespace(py_func=fn), "args": args})


def test_the_game_is_named_from_the_module_or_the_records():
    import rummy_env

    assert cn.game_of("rummy_env.rules.rummy51.kernels", ()) == "rummy51"
    assert cn.game_of("rummy_env.rules.five_hundred_rum.jmelds", ()) == "five_hundred_rum"
    venv = rummy_env.make_vec("five_hundred_rum", 2)
    assert cn.game_of("rummy_env.core.batch", (venv.game.states,)) == "five_hundred_rum"
    gin = rummy_env.make_vec("gin_rummy", 2, num_players=4)
    assert cn.game_of("rummy_env.core.batch", (gin.game.states,)) == "gin_rummy"
    assert cn.game_of("rummy_env.core.melds", (np.zeros(3),)) is None
    assert cn.notice_text("rummy51", "x") == (
        "rummy_env: compiling the Rummy 51 kernels, first run only (cached on disk after), "
        f"about {cn.GAME_SECONDS['rummy51']} s"
    )
    assert "agents'" in cn.notice_text(None, "rummy_agents.heuristic")
    assert f"about {cn.AGENT_SECONDS} s" in cn.notice_text(None, "rummy_agents.arena.batch")


def test_a_long_compile_prints_one_line_once_and_a_short_one_nothing():
    out = io.StringIO()
    notice = cn.CompileNotice(0.05, out)
    ev = _event("rummy_env.rules.gin_rummy.kernels")
    notice.on_start(ev)  # a quick one: done before the delay
    notice.on_end(ev)
    time.sleep(0.15)
    assert out.getvalue() == ""
    notice.on_start(ev)  # a long one, with nested compiles of callees
    notice.on_start(_event("rummy_env.core.melds"))
    time.sleep(0.15)
    notice.on_end(ev)
    notice.on_end(ev)
    lines = out.getvalue().splitlines()
    assert lines == [cn.notice_text("gin_rummy", "")]
    notice.on_start(ev)  # the same game again: already said
    time.sleep(0.15)
    notice.on_end(ev)
    assert out.getvalue().splitlines() == lines
    notice.on_start(_event("numpy.something"))  # not ours
    time.sleep(0.15)
    notice.on_end(ev)
    assert out.getvalue().splitlines() == lines


FIRST_STEP = """
import numpy as np
import rummy_env
env = rummy_env.gin_rummy_v0.env()
env.reset(seed=0)
obs, *_ = env.last()
env.step(int(np.flatnonzero(obs["action_mask"])[0]))
"""


def test_a_cold_first_step_names_its_compile_and_a_warm_one_is_silent(tmp_path):
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(tmp_path),
        "RUMMY_ENV_PREBUILT": "0",  # no prebuilt kernels: everything compiles
        "RUMMY_ENV_COMPILE_NOTICE": "1.5",  # Gin's reset compiles for 3-10 s, nothing else 1.5
    }

    def run() -> list[str]:
        res = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(FIRST_STEP)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=900,
        )
        return [ln for ln in res.stderr.splitlines() if ln.startswith("rummy_env: compiling")]

    assert run() == [cn.notice_text("gin_rummy", "")]
    assert run() == []  # loaded from the cache


def test_the_delay_is_set_or_turned_off_by_the_environment(monkeypatch):
    for raw, want in (("", cn.NOTICE_AFTER), ("0.5", 0.5), ("off", None), ("x", cn.NOTICE_AFTER)):
        monkeypatch.setenv(cn.ENV_VAR, raw)
        assert cn._delay() == want
