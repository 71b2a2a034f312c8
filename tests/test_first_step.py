"""A first step compiles only what it needs, once per kind of argument (issue: cold start).

``core.jit.kernel`` compiles a callee once for literal and narrow-integer arguments alike;
the batch layer's ``settle`` keeps the end-of-hand work out of the AEC env's first step.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
from numba.core import types

from rummy_env.core.jit import KernelDispatcher, kernel, widen


def _uncached(f):
    """A ``KernelDispatcher`` without the disk cache (so each test run compiles afresh)."""
    return KernelDispatcher(py_func=f, locals={}, targetoptions={"nopython": True})


def test_widen_drops_literals_and_narrow_widths():
    assert widen(types.literal(3)) == types.int64
    assert widen(types.literal(True)) == types.boolean
    assert widen(types.int8) == types.int64
    assert widen(types.uint16) == types.int64
    assert widen(types.uint64) == types.uint64  # bit masks keep their type
    assert widen(types.float32) == types.float32
    arr = types.Array(types.int8, 1, "C")
    assert widen(arr) == arr


def test_a_callee_compiles_once_for_literals_and_narrow_ints():
    def callee(x, flag):
        return x + 1 if flag else x - 1

    callee = _uncached(callee)

    def caller(a8, b):
        return callee(0, True) + callee(a8, False) + callee(np.int32(3), b) + callee(a8, b)

    caller = _uncached(caller)
    assert caller(np.int8(5), True) == 1 + 4 + 4 + 6
    assert [tuple(s) for s in callee.signatures] == [(types.int64, types.boolean)]


def test_kernel_accepts_the_numba_options_it_documents():
    @kernel(inline="always")
    def tiny(x):
        return x * 2

    assert isinstance(tiny, KernelDispatcher)
    assert tiny.targetoptions["inline"] == "always"
    assert tiny(np.int64(4)) == 8


FIRST_STEP = """
import numpy as np
import rummy_env
from rummy_env.core import batch
from rummy_env.rules.gin_rummy import kernels as K

env = rummy_env.gin_rummy_v0.env()
env.reset(seed=0)
obs, *_ = env.last()
env.step(int(np.flatnonzero(obs["action_mask"])[0]))
first = [len(f.signatures) for f in (batch.settle_single, K.settle, K.score_hand, K.auto_knocker)]
rng = np.random.default_rng(0)
for agent in env.agent_iter():
    obs, reward, term, trunc, _ = env.last()
    env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
rec = env.unwrapped.game.states[0]
ended = rec["hands_played"] >= 1 and rec["outcome"] > 0
print(*first, len(batch.settle_single.signatures), int(ended))
"""


def test_the_first_gin_step_does_not_compile_the_end_of_a_hand(tmp_path):
    """With an empty numba cache, the first AEC step compiles no scoring; the first hand that
    ends compiles ``settle_single`` and is finished by it.
    """
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(FIRST_STEP)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    ).stdout.split()
    assert out == ["0", "0", "0", "0", "1", "1"]
