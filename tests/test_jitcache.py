"""numba caches of edited kernel sources are dropped (``rummy_env.core.jitcache``).

numba checks a cached function against its own file only, so a cached batch entry point would
keep an old game hook compiled in. The first test shows the cleaning rule on files; the second
plays the whole story with a tiny package whose entry point calls a hook overloaded in another
file: after an edit to the hook, a new process computes with the new hook.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from rummy_env.core import jitcache


def _caches(d: Path) -> list[str]:
    return sorted(p.name for p in (d / "__pycache__").glob("*.nb*"))


def _fake_caches(d: Path) -> None:
    (d / "__pycache__").mkdir(exist_ok=True)
    for name in ("k.f-3.py311.nbi", "k.f-3.py311.1.nbc"):
        (d / "__pycache__" / name).write_bytes(b"x")


def test_caches_are_dropped_exactly_when_a_source_changes(tmp_path):
    pkg = tmp_path / "pkg"
    sub = pkg / "rules"
    sub.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (sub / "k.py").write_text("A = 1\n")
    _fake_caches(sub)
    first = jitcache.clean_stale(pkg, [pkg])
    assert _caches(sub) == []  # no digest stored yet: caches of unknown sources go
    assert (pkg / "__pycache__" / jitcache.DIGEST_FILE).read_text().strip() == first
    _fake_caches(sub)
    assert jitcache.clean_stale(pkg, [pkg]) == first
    assert len(_caches(sub)) == 2  # nothing changed: caches kept
    (sub / "k.py").write_text("A = 2\n")
    assert jitcache.clean_stale(pkg, [pkg]) != first
    assert _caches(sub) == []
    _fake_caches(sub)
    assert jitcache.clean_stale(pkg, [pkg], extra="other package changed") != first
    assert _caches(sub) == []  # a changed dependency counts as a change


def test_a_read_only_cache_folder_is_left_alone(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "k.py").write_text("A = 1\n")
    _fake_caches(pkg)
    (pkg / "__pycache__").chmod(0o555)
    try:
        jitcache.clean_stale(pkg, [pkg])  # no error
    finally:
        (pkg / "__pycache__").chmod(0o755)


PKG_INIT = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("jitcache", {jitcache!r})
jc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(jc)
from pathlib import Path
jc.clean_stale(Path(__file__).parent, [Path(__file__).parent])
"""
PKG_BATCH = """
from numba import njit

def hook(rec, a):
    raise NotImplementedError

@njit(cache=True)
def entry(states, a):
    for i in range(states.shape[0]):
        hook(states[i], a)
"""
PKG_GAME = """
import numpy as np
from numba import njit
from numba.extending import overload
from numba.np.numpy_support import from_dtype
from pkg import batch

D = np.dtype([("x", np.int64)], align=True)

@njit(cache=True)
def apply(rec, a):
    rec.x += {factor} * a

@overload(batch.hook, jit_options={{"cache": True}}, inline="always")
def _hook(rec, a):
    if rec == from_dtype(D):
        return lambda rec, a: apply(rec, a)
"""
RUN = """
import numpy as np
from pkg import batch, game
s = np.zeros(2, game.D)
batch.entry(s, 1)
print(int(s["x"][0]), batch.entry.stats.cache_hits and 1 or 0)
"""


def test_an_edited_hook_is_compiled_anew(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(PKG_INIT.format(jitcache=jitcache.__file__))
    (pkg / "batch.py").write_text(PKG_BATCH)

    def run(factor: int) -> tuple[int, int]:
        (pkg / "game.py").write_text(PKG_GAME.format(factor=factor))
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        env.pop("NUMBA_CACHE_DIR", None)
        out = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(RUN)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        return int(out[0]), int(out[1])

    assert run(2) == (2, 0)
    assert run(2) == (2, 1)  # unchanged sources: the cache serves
    assert run(7) == (7, 0)  # the hook's edit reaches the cached entry point
