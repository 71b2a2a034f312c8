"""Throughput of rummy_env's Gin Rummy next to RLCard and OpenSpiel, in one run on one machine.

Usage:
    python experiments/benchmark.py                       # full run, writes BENCHMARKS.md
    python experiments/benchmark.py --quick --no-peers --output /tmp/B.md   # smoke test

What is measured (each measurement is repeated ``--repeats`` times, the repeats of all
measurements are interleaved so that machine noise hits every engine alike, and the median,
min and max are reported):

(a) vector env steps/s: ``venv.step`` on a batch of games with random legal actions; only the time
    inside ``venv.step`` is counted (it returns observations and masks for every game).
(b) random full hands/s in the compiled core: ``kernels.play_random_parallel`` plays whole hands
    with a uniformly random policy inside the numba kernel (also its single-thread variant).
(c) AEC env steps/s through the PettingZoo wrappers, the standard ``agent_iter`` loop.
(d) exact deadwood solver hands/s on random 10-card hands (``deadwood``) and 11-card hands
    (``deadwood_after_discard``).
(e) training throughput: env steps/s per update of ``experiments/ppo_selfplay.py`` with each
    game's best feature set (Gin 2,048 games, 500 Rum and Rummy 51 512 games; rollout inference,
    opponents, features and PPO updates included; ``experiments/train_throughput.py``), when
    torch is installed.
(f) the doors users walk through, each next to OpenSpiel's loop in the same run: every game's
    PettingZoo ``env()`` and ``raw_env()`` loop, every Gymnasium id with its default rule
    opponent through ``gymnasium.make`` and ``gymnasium.make_vec(num_envs=256)`` (learner
    steps/s), the README's main job (``rummy-env arena --game all --deals 2000``, whole
    process), and each game's first AEC and Gymnasium step with an empty numba cache.
Plus import-to-first-step time in a fresh interpreter, bytes of state per game and the peers:
RLCard's ``gin-rummy`` env and OpenSpiel's ``gin_rummy`` driven from a Python loop (with and
without ``observation_tensor`` per decision), each given a fixed time budget per repeat.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata as md
import json
import os
import platform
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

# Targets from the issue: (label, measurement key, threshold, unit).
TARGET_VEC_STEPS = 1_000_000.0
TARGET_KERNEL_HANDS = 10_000.0
TARGET_AEC_STEPS = 100_000.0  # Gin `env()`, and >= AEC_OPENSPIEL_MULTIPLE x OpenSpiel's loop
AEC_OPENSPIEL_MULTIPLE = 3.0
TARGET_GYM = {"gin_rummy": 50_000.0, "five_hundred_rum": 20_000.0, "rummy51": 20_000.0}
"""Learner steps/s of each Gymnasium id, single env, with its default opponent."""
TARGET_GYM_VEC = {"gin_rummy": 1_000_000.0, "five_hundred_rum": 200_000.0, "rummy51": 200_000.0}
"""Learner steps/s of each Gymnasium id's ``make_vec(num_envs=GYM_VEC_ENVS)``."""
GYM_VEC_ENVS = 256
ISSUE_OPENSPIEL_OBS = 24_091.0
"""OpenSpiel's Gin loop with observation (steps/s) in the run that set the door targets above
(issue 52's table). A target divided by it is the multiple of OpenSpiel's loop the target
meant on that machine; the doors table reads each door against that multiple too, in the same
run, since this shared machine's speed varies by up to 3x from day to day."""
GYM_IDS = {
    "gin_rummy": "rummy/GinRummy-v0",
    "five_hundred_rum": "rummy/FiveHundredRum-v1",
    "rummy51": "rummy/Rummy51-v1",
}
TARGET_FIRST_AEC_S = 15.0  # each game's first AEC step, empty numba cache
TARGET_FIRST_GYM_S = 20.0  # each Gymnasium id's first step with its default opponent, same
TARGET_ARENA_S = 60.0  # the README's main job, warm cache
GAME_NAMES = {"gin_rummy": "Gin Rummy", "five_hundred_rum": "500 Rum", "rummy51": "Rummy 51"}
TARGET_STATE_BYTES = 4096
JAX_A100_HANDS = 29_500.0  # published JAX engine on an A100 GPU (reference only)
OPENSPIEL_MULTIPLE = 15.0  # (a) is meant to be about 15x OpenSpiel's Python loop

STARTUP_AEC = """
import time
t0 = time.perf_counter()
import numpy as np
import rummy_env
env = rummy_env.{module}.env()
env.reset(seed=0)
obs, *_ = env.last()
env.step(int(np.flatnonzero(obs["action_mask"])[0]))
print(time.perf_counter() - t0)
"""

STARTUP_GAMES = (
    ("gin_rummy", "Gin Rummy", "gin_rummy_v0"),
    ("five_hundred_rum", "500 Rum", "five_hundred_rum_v1"),
    ("rummy51", "Rummy 51", "rummy51_v1"),
)
"""(key, name, env module) of the games whose AEC start-up is measured."""

STARTUP_GYM = """
import time
t0 = time.perf_counter()
import gymnasium
import rummy_env
env = gymnasium.make("{gym_id}")
env.reset(seed=0)
env.step(int(env.unwrapped.action_masks().argmax()))
print(time.perf_counter() - t0)
"""

ARENA_COMMAND = "rummy-env arena --game all --deals {deals} --workers 2 --seed 0 --out {out}"
"""The README's main job (2,000 deals; ``--quick``: 10)."""
PPO_ARENA_COMMAND = (
    "rummy-env arena --game {game} --agents ppo,{rule} --deals {deals} --workers 2 --seed 0 "
    "--out none"
)
"""A published ``ppo`` agent against its game's rule agent (issue 52's second arena target)."""
PPO_ARENA_RULE = {"gin_rummy": "simple", "five_hundred_rum": "greedy", "rummy51": "greedy"}

STARTUP_VEC = """
import time
t0 = time.perf_counter()
import rummy_env
venv = rummy_env.make_vec("gin_rummy", {batch}, seed=0)
obs, info = venv.reset()
venv.step(obs["action_mask"].argmax(1))
print(time.perf_counter() - t0)
"""

# Which build does each compiled entry point actually run? numba's on-disk cache keys entries by
# the Python function's bytecode and name, not by ``parallel=``, so a serial and a parallel
# dispatcher made from the same function can load each other's build (numba issue #6845).
# A fresh interpreter calls one entry point and reports whether numba's threading layer started.
BUILD_PROBE = """
import sys
import numba
import numpy as np
import rummy_env
from rummy_env.core import deadwood
from rummy_env.rules.gin_rummy import kernels as K
which = sys.argv[1]
if which == "aec":
    env = rummy_env.gin_rummy_v0.env()
    env.reset(seed=0)
    for _ in range(40):
        obs, _r, term, trunc, _info = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
elif which.startswith("step_batch"):
    n = 1 if which == "step_batch" else 256
    venv = rummy_env.make_vec("gin_rummy", n, seed=0)
    obs, _ = venv.reset()
    venv.step(obs["action_mask"].argmax(1))
elif which.startswith("play_random"):
    g = rummy_env.make_vec("gin_rummy", 4, seed=0).game
    oc = np.zeros((4, 1), np.int64)
    fn = getattr(K, which)
    fn(g.states, g.cfg, K.TABLES, 1, oc, oc.copy(), np.zeros((4, 1, 2), np.int64), oc.copy())
else:
    h = np.zeros((16 if which == "deadwood_serial" else 4096, 52), np.int8)
    h[:, :10] = 1
    deadwood(h)
try:
    print(numba.threading_layer())
except ValueError:
    print("none")
"""
BUILD_CHECKS = [
    # (probe argument, what is called, expected to run the parallel build)
    ("aec", "AEC env `reset` + `step` (one game)", False),
    ("step_batch", "`kernels.step_batch` (vector env below 256 games)", False),
    ("step_batch_parallel", "`kernels.step_batch_parallel` (vector env >= 256 games)", True),
    ("play_random", "`kernels.play_random`", False),
    ("play_random_parallel", "`kernels.play_random_parallel`", True),
    ("deadwood_serial", "`deadwood`, B < 4096 (serial `_deadwood_batch`)", False),
    ("deadwood_parallel", "`deadwood`, B >= 4096 (`_deadwood_batch_par`)", True),
]


@dataclass
class Measurement:
    """Per-repeat samples of one figure.

    Attributes:
        key: short identifier used to look the figure up (targets, ratios).
        label: row label in the report.
        unit: unit of the samples (e.g. ``steps/s``).
        samples: one value per repeat.
        note: free text for the report (what was counted, why it was skipped).
        higher_is_better: whether larger samples are better (False for times).

    """

    key: str
    label: str
    unit: str
    samples: list[float] = field(default_factory=list)
    note: str = ""
    higher_is_better: bool = True

    @property
    def ok(self) -> bool:
        """Whether there is at least one sample."""
        return len(self.samples) > 0

    @property
    def median(self) -> float:
        """Median of the samples (NaN when there are none)."""
        return statistics.median(self.samples) if self.samples else float("nan")

    @property
    def lo(self) -> float:
        """Smallest sample (NaN when there are none)."""
        return min(self.samples) if self.samples else float("nan")

    @property
    def hi(self) -> float:
        """Largest sample (NaN when there are none)."""
        return max(self.samples) if self.samples else float("nan")


@dataclass
class Sizes:
    """Problem sizes of one run (full or ``--quick``)."""

    batch: int
    vec_steps: int
    kernel_episodes: int
    deadwood_batch: int
    seconds: float
    startup_repeats: int
    cold_startup: bool
    quick: bool = False
    train: bool = True


# --------------------------------------------------------------------------------------------
# formatting helpers


def fmt(x: float, unit: str = "") -> str:
    """Human-readable number: thousands separators, 3 significant digits for small values."""
    if x != x:  # NaN
        return "n/a"
    if unit == "s":
        return f"{x:.3f}"
    if abs(x) >= 1000 or float(x).is_integer():
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:,.1f}"
    return f"{x:.3g}"


def ratio(a: float, b: float) -> str:
    """``a / b`` formatted as a multiple, or ``n/a``."""
    if a != a or b != b or b == 0:
        return "n/a"
    return f"{a / b:.2f}x"


def table(header: list[str], rows: list[list[str]]) -> str:
    """Markdown table."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# machine description


def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo (falls back to ``platform.processor()``)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def version_of(dist: str) -> str:
    """Installed version of distribution ``dist`` or ``not installed``."""
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return "not installed"


def git_revision() -> str:
    """Short commit of the working tree (read-only ``git`` call), ``+dirty`` if modified."""
    root = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return (rev or "unknown") + ("+dirty" if dirty else "")


LOAD_AT_START: list[str] = []


def load_average() -> str:
    """The 1/5/15-minute load averages as text."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def machine_info() -> list[tuple[str, str]]:
    """(item, value) rows describing the machine and the software."""
    import numba

    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count() or 0
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not started"
    load = load_average()
    return [
        ("CPU", cpu_model()),
        ("cores (os.cpu_count / usable)", f"{os.cpu_count()} / {affinity}"),
        ("numba threads (layer)", f"{numba.get_num_threads()} ({layer})"),
        ("load average at start (1/5/15 min)", LOAD_AT_START[0] if LOAD_AT_START else "n/a"),
        ("load average at end (1/5/15 min)", load),
        ("OS", platform.platform()),
        ("Python", platform.python_version()),
        ("numpy", np.__version__),
        ("numba", numba.__version__),
        ("gymnasium", version_of("gymnasium")),
        ("pettingzoo", version_of("pettingzoo")),
        ("rummy_env", f"{version_of('rummy_env')} (git {git_revision()})"),
        ("rlcard (peer)", version_of("rlcard")),
        ("open_spiel (peer)", version_of("open_spiel")),
    ]


# --------------------------------------------------------------------------------------------
# our engine


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of an (N, A) 0/1 mask (bool or int8).

    The ``k``-th legal action of each row, ``k`` uniform below the row's count: one random
    number per row, where the argmax of uniform noise over the mask drew N x A of them and,
    with the joker games' 1,766 and 3,188 actions, took as long as the env's step
    (3.9 ms against 0.7 ms per call at 256 x 3,188); counted and picked in one compiled pass
    over the rows on the numba threads (``rummy_env.core.rng.pick_legal``: at 256 x 3,188,
    numpy's ``count_nonzero(axis=1)`` and ``flatnonzero`` took 0.8 ms, a compiled count and
    pick in two passes 72 us, one pass on two threads about 30 us).
    """
    from rummy_env.core.rng import pick_legal

    if mask.dtype.itemsize != 1:
        mask = mask != 0
    return pick_legal(mask, rng.random(len(mask)))


class VecStepBench:
    """(a) ``venv.step`` throughput; only the time inside ``venv.step`` is counted."""

    def __init__(
        self, batch: int, steps: int, seed: int = 0, game: str = "gin_rummy", **options: Any
    ) -> None:
        import rummy_env

        self.batch, self.steps = batch, steps
        self.venv = rummy_env.make_vec(game, batch, seed=seed, **options)
        self.obs, _ = self.venv.reset()
        self.rng = np.random.default_rng(seed)
        self.run(max(20, steps // 10))  # warm-up: numba compile / cache load, caches, threads

    def run(self, steps: int | None = None) -> float:
        """Step ``steps`` times; returns game-steps per second of ``venv.step`` time."""
        steps = self.steps if steps is None else steps
        spent = 0.0
        obs = self.obs
        for _ in range(steps):
            actions = random_legal(obs["action_mask"], self.rng)
            t0 = time.perf_counter()
            obs, _r, _te, _tr, _info = self.venv.step(actions)
            spent += time.perf_counter() - t0
        self.obs = obs
        return steps * self.batch / spent


class KernelBench:
    """(b) random full hands inside the compiled core (``play_random[_parallel]``)."""

    def __init__(self, batch: int, episodes: int, parallel: bool, seed: int = 1) -> None:
        import rummy_env
        from rummy_env.rules.gin_rummy import kernels as K

        self.K = K
        self.fn = K.play_random_parallel if parallel else K.play_random
        self.batch, self.episodes = batch, episodes
        self.game = rummy_env.make_vec("gin_rummy", batch, seed=seed).game
        # warm-up with arrays of the same dtype / ndim / C-contiguity as the timed call
        self._call(self._arrays(1), 1)

    def _arrays(self, ne: int) -> tuple[np.ndarray, ...]:
        oc = np.zeros((self.batch, ne), np.int64)
        return oc, oc.copy(), np.zeros((self.batch, ne, 2), np.int64), oc.copy()

    def _call(self, arrays: tuple[np.ndarray, ...], ne: int) -> None:
        oc, ln, pts, hp = arrays
        g = self.game
        self.fn(g.states, g.cfg, self.K.TABLES, ne, oc, ln, pts, hp)

    def run(self) -> tuple[float, float, float]:
        """Returns (hands/s, decisions/s, mean decisions per hand)."""
        arrays = self._arrays(self.episodes)
        t0 = time.perf_counter()
        self._call(arrays, self.episodes)
        spent = time.perf_counter() - t0
        _oc, ln, _pts, hp = arrays
        hands, decisions = float(hp.sum()), float(ln.sum())
        return hands / spent, decisions / spent, decisions / max(hands, 1.0)


class AecBench:
    """(c) PettingZoo AEC loop; counts steps that take an action, and finished hands.

    ``raw=True`` runs ``raw_env`` without PettingZoo's wrappers, to show what they cost.
    """

    def __init__(self, seed: int = 2, raw: bool = False, game: str = "gin_rummy") -> None:
        import rummy_env

        module = rummy_env.ENV_MODULES[game]
        self.env = module.raw_env() if raw else module.env()
        self.env.reset(seed=seed)
        self.rnd = random.Random(seed)
        self.run(0.05)

    def run(self, seconds: float) -> tuple[float, float, float]:
        """Play whole hands for ``seconds``; returns (steps/s, hands/s, steps/hand)."""
        env, rnd = self.env, self.rnd
        steps = hands = 0
        t0 = time.perf_counter()
        while True:
            for _agent in env.agent_iter():
                obs, _r, term, trunc, _info = env.last()
                if term or trunc:
                    action = None
                else:
                    legal = np.flatnonzero(obs["action_mask"])
                    action = int(legal[int(rnd.random() * len(legal))])
                    steps += 1
                env.step(action)
            hands += 1
            env.reset()
            spent = time.perf_counter() - t0
            if spent >= seconds:
                break
        return steps / spent, hands / spent, steps / hands


class GymBench:
    """A Gymnasium id with its default opponent, as a user makes it: ``gymnasium.make(id)``
    (with Gymnasium's wrappers) or ``gymnasium.make_vec(id, num_envs=N)``; random legal
    learner actions from ``action_masks()``. Counts learner steps (the opponents' moves
    happen inside each step).
    """

    def __init__(self, game: str, num_envs: int | None = None, seed: int = 6) -> None:
        import gymnasium

        import rummy_env  # noqa: F401 - registers the ids

        gym_id = GYM_IDS[game]
        self.num_envs = num_envs
        if num_envs is None:
            self.env = gymnasium.make(gym_id)
        else:
            self.env = gymnasium.make_vec(gym_id, num_envs=num_envs)
        self.env.reset(seed=seed)
        self.rnd = random.Random(seed)
        self.rng = np.random.default_rng(seed)
        self.run(0.05)

    def run(self, seconds: float) -> tuple[float, float, float]:
        """Step for ``seconds``; returns (learner steps/s, 0, 0)."""
        env, steps = self.env, 0
        t0 = time.perf_counter()
        if self.num_envs is None:
            masks = env.unwrapped.action_masks
            while True:
                for _ in range(100):
                    legal = np.flatnonzero(masks())
                    a = int(legal[int(self.rnd.random() * len(legal))])
                    _obs, _r, term, trunc, _info = env.step(a)
                    if term or trunc:
                        env.reset()
                steps += 100
                spent = time.perf_counter() - t0
                if spent >= seconds:
                    return steps / spent, 0.0, 0.0
        while True:
            # the returns held until the next step, as a user's loop holds them (a fresh
            # array per step then costs page faults; see the vector env's buffer pool)
            _obs, _r, _term, _trunc, _info = env.step(random_legal(env.action_masks(), self.rng))
            steps += self.num_envs
            spent = time.perf_counter() - t0
            if spent >= seconds:
                return steps / spent, 0.0, 0.0


def arena_seconds(deals: int, game: str | None = None) -> float:
    """Wall time of the README's main job in a fresh process (numba cache warm); with ``game``,
    of ``PPO_ARENA_COMMAND`` for that game.
    """
    import shlex as _shlex

    with tempfile.TemporaryDirectory(prefix="bench_arena_") as out:
        if game is None:
            text = ARENA_COMMAND.format(deals=deals, out=out)
        else:
            text = PPO_ARENA_COMMAND.format(game=game, rule=PPO_ARENA_RULE[game], deals=deals)
        cmd = _shlex.split(text)
        cmd[0] = str(Path(sys.executable).with_name("rummy-env"))
        t0 = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        spent = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"arena failed:\n{res.stderr[-2000:]}")
    return spent


class DeadwoodBench:
    """(d) exact deadwood solver on random hands (public API, input validation included)."""

    def __init__(self, batch: int, seed: int = 3) -> None:
        from rummy_env.core import deadwood, deadwood_after_discard

        rng = np.random.default_rng(seed)
        self.fns = {10: deadwood, 11: deadwood_after_discard}
        self.hands = {k: self._hands(rng, batch, k) for k in (10, 11)}
        for k, fn in self.fns.items():  # warm both the serial (<4096) and parallel paths
            fn(self.hands[k][:16])
            fn(self.hands[k])

    @staticmethod
    def _hands(rng: np.random.Generator, batch: int, k: int) -> np.ndarray:
        idx = np.argsort(rng.random((batch, 52)), axis=1)[:, :k]
        hands = np.zeros((batch, 52), np.int8)
        np.put_along_axis(hands, idx, 1, axis=1)
        return hands

    def run(self, k: int) -> float:
        """Hands per second of the ``k``-card solver."""
        h = self.hands[k]
        t0 = time.perf_counter()
        self.fns[k](h)
        return h.shape[0] / (time.perf_counter() - t0)


def startup_time(
    code: str, cache_dir: str | None = None, prebuilt_kernels: bool = True
) -> tuple[float, float]:
    """Run ``code`` in a fresh interpreter; returns (in-process time it prints, process wall).
    ``prebuilt_kernels=False`` turns off the prebuilt tier (``rummy_env.core.prebuilt``).
    """
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    if not prebuilt_kernels:
        env["RUMMY_ENV_PREBUILT"] = "0"
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise RuntimeError(f"start-up subprocess failed:\n{res.stderr[-2000:]}")
    return float(res.stdout.strip().splitlines()[-1]), wall


def prebuild_seconds() -> float:
    """The compile time of the installed prebuilt tier (its manifest's ``build_seconds``), NaN
    when there is none.
    """
    import rummy_env  # noqa: PLC0415
    from rummy_env.core import prebuilt  # noqa: PLC0415

    try:
        path = Path(rummy_env.__file__).parent / prebuilt.FOLDER / prebuilt.MANIFEST
        return float(json.loads(path.read_text())["build_seconds"])
    except (OSError, ValueError, KeyError):
        return float("nan")


def first_run(startup: dict[str, Measurement], key: str) -> float:
    """The first-run figure a target reads for ``key`` (``aec_<game>``, ``gym_<game>``): with
    the install's prebuilt kernels when it has them, else the full compile.
    """
    for kind in ("cold", "cold_compile"):
        found = startup.get(f"{key}_{kind}")
        if found is not None and found.ok:
            return found.median
    return float("nan")


def prebuilt_present() -> bool:
    """Does the installed rummy_env carry prebuilt kernels (``rummy_env.core.prebuilt``)?"""
    import rummy_env  # noqa: PLC0415
    from rummy_env.core import prebuilt  # noqa: PLC0415

    folder = Path(rummy_env.__file__).parent / prebuilt.FOLDER
    return prebuilt.host_supported() and any(folder.rglob("*.nbc"))


def build_checks() -> list[list[str]]:
    """Rows: entry point, expected build, threading layer seen in a fresh interpreter, status."""
    rows = []
    for arg, label, parallel in BUILD_CHECKS:
        res = subprocess.run(
            [sys.executable, "-c", BUILD_PROBE, arg], capture_output=True, text=True, check=False
        )
        if res.returncode != 0:
            rows.append([label, "", "probe failed", res.stderr.strip().splitlines()[-1][:80]])
            continue
        layer = res.stdout.strip().splitlines()[-1]
        launched = layer != "none"
        expected = "parallel" if parallel else "serial"
        got = "parallel" if launched else "serial"
        status = "ok" if launched == parallel else f"**WRONG BUILD: runs the {got} one**"
        rows.append([label, expected, f"{layer}", status])
    return rows


# --------------------------------------------------------------------------------------------
# peers


class RLCardBench:
    """RLCard ``gin-rummy``: random legal actions with its ``env.step`` loop."""

    def __init__(self, seed: int = 4) -> None:
        import rlcard  # noqa: F401 - ImportError is handled by the caller

        self.env = rlcard.make("gin-rummy", config={"seed": seed})
        self.rnd = random.Random(seed)
        self.run(0.05)

    def run(self, seconds: float) -> tuple[float, float, float]:
        """Play whole hands for ``seconds``; returns (steps/s, hands/s, steps/hand)."""
        env, rnd = self.env, self.rnd
        steps = hands = 0
        t0 = time.perf_counter()
        while True:
            state, _player = env.reset()
            while not env.is_over():
                action = rnd.choice(list(state["legal_actions"].keys()))
                state, _player = env.step(action)
                steps += 1
            hands += 1
            spent = time.perf_counter() - t0
            if spent >= seconds:
                break
        return steps / spent, hands / spent, steps / hands


class OpenSpielBench:
    """OpenSpiel ``gin_rummy`` from a Python loop; chance nodes sampled from their outcomes."""

    def __init__(self, observe: bool, seed: int = 5) -> None:
        import pyspiel  # noqa: F401 - ImportError is handled by the caller

        self.game = pyspiel.load_game("gin_rummy")
        self.observe = observe
        self.rnd = random.Random(seed)
        self.run(0.05)

    def run(self, seconds: float) -> tuple[float, float, float]:
        """Play whole hands for ``seconds``; returns (decisions/s, hands/s, decisions/hand).

        Only decision nodes count as steps; chance nodes (deal, stock draws) are not counted
        but their time is.
        """
        game, rnd, observe = self.game, self.rnd, self.observe
        steps = hands = 0
        t0 = time.perf_counter()
        while True:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    actions, probs = zip(*state.chance_outcomes(), strict=True)
                    state.apply_action(rnd.choices(actions, probs)[0])
                    continue
                if observe:
                    state.observation_tensor(state.current_player())
                legal = state.legal_actions()
                state.apply_action(legal[int(rnd.random() * len(legal))])
                steps += 1
            hands += 1
            spent = time.perf_counter() - t0
            if spent >= seconds:
                break
        return steps / spent, hands / spent, steps / hands


# --------------------------------------------------------------------------------------------
# the run


def run_all(sizes: Sizes, repeats: int, peers: bool) -> dict[str, Any]:
    """Set up, warm up and run every measurement; returns measurements and extra facts."""
    import numba

    m: dict[str, Measurement] = {}

    def add(key: str, label: str, unit: str, note: str = "", higher: bool = True) -> None:
        m[key] = Measurement(key, label, unit, note=note, higher_is_better=higher)

    b = sizes.batch
    add("vec", f"(a) vector env `venv.step`, batch {b}", "steps/s", "time inside venv.step only")
    add("vec1", f"(a) same, numba 1 thread, batch {b}", "steps/s", "per-core figure")
    add("k_hands", f"(b) kernel `play_random_parallel`, batch {b}", "hands/s")
    add("k_dec", "(b) same, decisions", "decisions/s")
    add("k_len", "(b) same, decisions per hand", "decisions", "mean")
    add("k1_hands", f"(b) kernel `play_random`, numba 1 thread, batch {b}", "hands/s", "per-core")
    add("aec", "(c) AEC env, PettingZoo wrappers", "steps/s", "steps that take an action")
    add("aec_hands", "(c) same, hands", "hands/s")
    add("aec_raw", "(c) AEC `raw_env`, no wrappers", "steps/s", "what the wrappers cost")
    add("aec_len", "(c) same, decisions per hand", "decisions", "mean")
    add("dw10", f"(d) `deadwood`, 10-card hands, B={sizes.deadwood_batch:,}", "hands/s")
    for n in (3, 4):
        add(f"gin_vec{n}", f"Gin Rummy vector env `venv.step`, {n} players, batch {b}", "steps/s")
    for n in (2, 4, 8):
        add(
            f"five_hundred_rum_vec{n}",
            f"500 Rum vector env `venv.step`, {n} players, batch {b}",
            "steps/s",
        )
    add("five_hundred_rum_aec", "500 Rum AEC env, PettingZoo wrappers, 2 players", "steps/s")
    for n in (2, 4, 6):
        add(
            f"rummy51_vec{n}", f"Rummy 51 vector env `venv.step`, {n} players, batch {b}", "steps/s"
        )
    add("rummy51_aec", "Rummy 51 AEC env, PettingZoo wrappers, 2 players", "steps/s")
    add("dw11", f"(d) `deadwood_after_discard`, 11-card, B={sizes.deadwood_batch:,}", "hands/s")
    for g in ("five_hundred_rum", "rummy51"):
        add(f"{g}_aec_raw", f"{GAME_NAMES[g]} AEC `raw_env`, no wrappers, 2 players", "steps/s")
    for g, name in GAME_NAMES.items():
        add(f"gym_{g}", f"`gymnasium.make` {name} id, default opponent", "steps/s", "learner steps")
        add(
            f"gymvec_{g}",
            f"`gymnasium.make_vec` {name} id, {GYM_VEC_ENVS} envs, default opponent",
            "steps/s",
            "learner steps",
        )
    add("arena_main", "the README's main job (`rummy-env arena --game all`)", "s", higher=False)
    for g, name in GAME_NAMES.items():
        add(f"arena_ppo_{g}", f"{name} arena, `ppo` vs `{PPO_ARENA_RULE[g]}`", "s", higher=False)
    peer_defs = [
        ("os_obs", "OpenSpiel `gin_rummy` loop + `observation_tensor`", "OpenSpiel + obs"),
        ("os", "OpenSpiel `gin_rummy` loop, no observation", "OpenSpiel, no obs"),
        ("rl", "RLCard `gin-rummy` `env.step` loop", "RLCard"),
    ]
    for key, label, short in peer_defs:
        add(key, label, "steps/s", "decision steps only")
        add(key + "_hands", f"{short}: hands", "hands/s")
        add(key + "_len", f"{short}: decisions per hand", "decisions", "mean")

    # -- set-up and warm-up (numba compile or cache load happens here, never timed) ----------
    print("setting up and warming up ...", file=sys.stderr)
    threads = numba.get_num_threads()
    vec = VecStepBench(b, sizes.vec_steps)
    kpar = KernelBench(b, sizes.kernel_episodes, parallel=True)
    numba.set_num_threads(1)
    kser = KernelBench(b, sizes.kernel_episodes, parallel=False)
    numba.set_num_threads(threads)
    aec = AecBench()
    aec_raw = AecBench(raw=True)
    gin_multi = {n: VecStepBench(b, sizes.vec_steps // 5, num_players=n) for n in (3, 4)}
    r500 = {n: VecStepBench(b, sizes.vec_steps // 5, game="five_hundred_rum", num_players=n)
            for n in (2, 4, 8)}  # fmt: skip
    five_hundred_rum_aec = AecBench(game="five_hundred_rum")
    r51 = {n: VecStepBench(b, sizes.vec_steps // 5, game="rummy51", num_players=n)
           for n in (2, 4, 6)}  # fmt: skip
    rummy51_aec = AecBench(game="rummy51")
    joker_raw = {g: AecBench(game=g, raw=True) for g in ("five_hundred_rum", "rummy51")}
    gym = {g: GymBench(g) for g in GAME_NAMES}
    gymvec = {g: GymBench(g, GYM_VEC_ENVS) for g in GAME_NAMES}
    dwb = DeadwoodBench(sizes.deadwood_batch)
    numba.set_num_threads(1)
    vec.run(5)
    numba.set_num_threads(threads)

    peer_benches: dict[str, Any] = {}
    if peers:
        for key, make in (
            ("os_obs", lambda: OpenSpielBench(observe=True)),
            ("os", lambda: OpenSpielBench(observe=False)),
            ("rl", RLCardBench),
        ):
            try:
                peer_benches[key] = make()
            except ImportError as exc:
                for k in (key, key + "_hands", key + "_len"):
                    m[k].note = f"skipped: not installed ({exc.name or exc})"
    else:
        for key, _label, _short in peer_defs:
            for k in (key, key + "_hands", key + "_len"):
                m[k].note = "skipped (--no-peers)"

    # -- timed repeats, interleaved ----------------------------------------------------------
    tasks: list[tuple[str, Callable[[], None]]] = []

    def t_vec() -> None:
        m["vec"].samples.append(vec.run())

    def t_vec1() -> None:
        numba.set_num_threads(1)
        try:
            m["vec1"].samples.append(vec.run())
        finally:
            numba.set_num_threads(threads)

    def t_kernel() -> None:
        hands, decisions, length = kpar.run()
        m["k_hands"].samples.append(hands)
        m["k_dec"].samples.append(decisions)
        m["k_len"].samples.append(length)

    def t_kernel1() -> None:
        # pinned to one thread: `play_random` may be the parallel build (see the build checks)
        numba.set_num_threads(1)
        try:
            m["k1_hands"].samples.append(kser.run()[0])
        finally:
            numba.set_num_threads(threads)

    def t_aec() -> None:
        steps, hands, length = aec.run(sizes.seconds)
        m["aec"].samples.append(steps)
        m["aec_hands"].samples.append(hands)
        m["aec_len"].samples.append(length)

    def t_aec_raw() -> None:
        m["aec_raw"].samples.append(aec_raw.run(sizes.seconds)[0])

    def t_dw() -> None:
        m["dw10"].samples.append(dwb.run(10))
        m["dw11"].samples.append(dwb.run(11))

    tasks += [("vec", t_vec), ("vec1", t_vec1), ("kernel", t_kernel), ("kernel1", t_kernel1)]

    def t_gin_multi() -> None:
        for n, bench in gin_multi.items():
            m[f"gin_vec{n}"].samples.append(bench.run())

    def t_r500() -> None:
        for n, bench in r500.items():
            m[f"five_hundred_rum_vec{n}"].samples.append(bench.run())
        m["five_hundred_rum_aec"].samples.append(five_hundred_rum_aec.run(sizes.seconds)[0])

    def t_r51() -> None:
        for n, bench in r51.items():
            m[f"rummy51_vec{n}"].samples.append(bench.run())
        m["rummy51_aec"].samples.append(rummy51_aec.run(sizes.seconds)[0])

    def t_doors() -> None:
        for g in GAME_NAMES:
            m[f"gym_{g}"].samples.append(gym[g].run(sizes.seconds)[0])
            m[f"gymvec_{g}"].samples.append(gymvec[g].run(sizes.seconds)[0])
        for g, bench in joker_raw.items():
            m[f"{g}_aec_raw"].samples.append(bench.run(sizes.seconds)[0])

    tasks += [
        ("doors", t_doors),
        ("aec", t_aec),
        ("aec_raw", t_aec_raw),
        ("deadwood", t_dw),
        ("gin_3_4", t_gin_multi),
        ("500rum", t_r500),
        ("rummy51", t_r51),
    ]
    for key, bench in peer_benches.items():

        def t_peer(key: str = key, bench: Any = bench) -> None:
            steps, hands, length = bench.run(sizes.seconds)
            m[key].samples.append(steps)
            m[key + "_hands"].samples.append(hands)
            m[key + "_len"].samples.append(length)

        tasks.append((key, t_peer))

    bar = tqdm(total=repeats * len(tasks), desc="benchmark", file=sys.stderr)
    for _ in range(repeats):
        for name, task in tasks:
            bar.set_postfix_str(name)
            task()
            bar.update()
    bar.close()

    # -- the README's main job, once (it takes about a minute)
    print("the README's main job ...", file=sys.stderr)
    deals = 10 if sizes.quick else 2000
    arena_seconds(10)  # a short run first, so that its kernels are compiled and cached
    m["arena_main"].samples.append(arena_seconds(deals))
    m["arena_main"].note = f"{deals} deals, numba cache warm, whole process"
    for g in GAME_NAMES:
        arena_seconds(4, g)
        m[f"arena_ppo_{g}"].samples.append(arena_seconds(deals, g))
        m[f"arena_ppo_{g}"].note = f"{deals} deals, numba cache warm, whole process"

    # -- start-up in fresh interpreters --------------------------------------------------------
    startup: dict[str, Measurement] = {}
    for key, label, code in (
        *(
            (f"aec_{g}", f"AEC env, {name}", STARTUP_AEC.format(module=module))
            for g, name, module in STARTUP_GAMES
        ),
        ("vec", f"vector env, Gin Rummy, batch {b}", STARTUP_VEC.format(batch=b)),
        *(
            (f"gym_{g}", f"`gymnasium.make` {GAME_NAMES[g]}", STARTUP_GYM.format(gym_id=gym_id))
            for g, gym_id in GYM_IDS.items()
        ),
    ):
        warm = Measurement(key, f"{label}, numba cache warm", "s", higher_is_better=False)
        wall = Measurement(
            key, f"{label}, numba cache warm (whole process)", "s", higher_is_better=False
        )
        startup_time(code)  # make sure this interpreter's cache is written and warm
        for _ in tqdm(range(sizes.startup_repeats), desc=f"start-up {key}", file=sys.stderr):
            t_in, t_wall = startup_time(code)
            warm.samples.append(t_in)
            wall.samples.append(t_wall)
        startup[key + "_warm"] = warm
        startup[key + "_wall"] = wall
        # cold: an empty numba cache, loading the prebuilt kernels when the install has them
        # (a wheel built after ``python -m rummy_agents.prebuild``), then compiling everything
        tiers = [("cold", "prebuilt kernels", True)] if prebuilt_present() else []
        for kind, how, tier in (*tiers, ("cold_compile", "compiled", False)):
            cold = Measurement(
                key, f"{label}, cold numba cache, {how}", "s", higher_is_better=False
            )
            if sizes.cold_startup:
                with tempfile.TemporaryDirectory(prefix="numba_cold_") as tmp:
                    t_in, _ = startup_time(code, cache_dir=tmp, prebuilt_kernels=tier)
                    cold.samples.append(t_in)
                cold.note = "one run, NUMBA_CACHE_DIR = fresh temp dir" + (
                    ", prebuilt kernels loaded" if tier else ", RUMMY_ENV_PREBUILT=0 (full compile)"
                )
            else:
                cold.note = "skipped (--quick)"
            startup[f"{key}_{kind}"] = cold

    print("training throughput ...", file=sys.stderr)
    if sizes.train:
        for game, n_envs, threads in TRAIN_GAMES:
            key = train_key(game, threads)
            if sizes.quick and (game != "gin_rummy" or threads > 1):  # each compiles kernels
                add(key, train_label(game, n_envs, threads), "steps/s", "skipped (--quick)")
                continue
            n_envs, updates = (64, 2) if sizes.quick else (n_envs, 10 if n_envs > 512 else 8)
            m[key] = train_throughput(game, n_envs, updates, threads)
    else:
        for game, n_envs, threads in TRAIN_GAMES:
            key = train_key(game, threads)
            add(key, train_label(game, n_envs, threads), "steps/s", "skipped (--no-train)")
    print("checking which numba builds run ...", file=sys.stderr)
    checks = build_checks()
    return {"m": m, "startup": startup, "obs_size": vec.venv.game.obs_size, "checks": checks}


TARGET_TRAIN_SPS = 20_000
TARGET_JOKER_TRAIN_SPS = 10_000
TRAIN_GAMES = tuple(
    (game, n_envs, threads)
    for threads in (1, 2)
    for game, n_envs in (("gin_rummy", 2048), ("five_hundred_rum", 512), ("rummy51", 512))
)
"""(game, games stepped together, torch and numba threads) of the training-throughput rows:
one thread (the per-core figure) and two (the machine's two cores, which the targets read)."""


def train_key(game: str, threads: int) -> str:
    """The measurement key of a training-throughput row."""
    return f"train_{game}" if threads == 1 else f"train_{game}_t{threads}"


def train_label(game: str, num_envs: int, threads: int = 1) -> str:
    """The report's label of a training-throughput row."""
    import train_throughput as tt  # beside this script

    return (
        f"(e) `ppo_selfplay.py` training, {tt.NAMES[game]}, {num_envs:,} games x 32 steps, "
        f"{threads} thread{'s' if threads > 1 else ''}"
    )


def train_throughput(game: str, num_envs: int, updates: int, threads: int = 1) -> Measurement:
    """(e) ``experiments/ppo_selfplay.py`` env steps/s per update with the game's best feature
    set (``train_throughput.RECIPES``; rollout inference, GAE and the PPO update all included),
    from its ``progress.csv``; the first update (warm-up) is dropped. Runs the script in a fresh
    interpreter; skipped when torch is not installed.
    """
    import train_throughput as tt

    note = f"per update, all included; {threads} torch and {threads} numba thread" + (
        "s" if threads > 1 else ""
    )
    meas = Measurement(train_key(game, threads), train_label(game, num_envs, threads), "steps/s",
                       note=note)  # fmt: skip
    try:
        import torch  # noqa: F401
    except ImportError:
        meas.note = "skipped: torch not installed (pip install -c constraints.txt -e .[train])"
        return meas
    meas.samples, why = tt.measure(game, num_envs, updates, threads=threads)
    if why:
        meas.note = why
    return meas


# --------------------------------------------------------------------------------------------
# report


def memory_rows(obs_size: int) -> tuple[list[list[str]], int]:
    """Rows of the memory table and the state size in bytes."""
    from rummy_env.rules.gin_rummy.state import GIN_STATE_DTYPE

    state = GIN_STATE_DTYPE.itemsize
    mask = 107  # int8 action-mask row (auto-meld action set)
    obs = obs_size * 4
    return [
        ["game state record (`GIN_STATE_DTYPE.itemsize`)", f"{state:,}"],
        ["action-mask row (107 x int8)", f"{mask:,}"],
        ["state + mask", f"{state + mask:,}"],
        [f"observation row returned by the vector env ({obs_size} x float32)", f"{obs:,}"],
        ["state + mask + observation", f"{state + mask + obs:,}"],
    ], state


def target_rows(
    m: dict[str, Measurement], state_bytes: int, startup: dict[str, Measurement]
) -> list[list[str]]:
    """Rows of the targets table: target, threshold, measured median, status, margin."""

    def row(name: str, value: float, threshold: float, unit: str, lower: bool = False) -> list[str]:
        if value != value:
            return [name, f"{fmt(threshold)} {unit}", "n/a", "n/a", ""]
        passed = value <= threshold if lower else value >= threshold
        margin = ratio(value, threshold) + " of target"
        if not passed:
            short = (value - threshold) if lower else (threshold - value)
            margin += f" (missed by {fmt(short)} {unit}, {abs(short) / threshold:.0%})"
        return [name, f"{fmt(threshold)} {unit}", f"{fmt(value)} {unit}", _status(passed), margin]

    rows = [
        row("(a) vector env steps/s >= 1,000,000", m["vec"].median, TARGET_VEC_STEPS, "steps/s"),
        row("(b) random hands/s >= 10,000", m["k_hands"].median, TARGET_KERNEL_HANDS, "hands/s"),
        row("(c) AEC `env()` steps/s >= 100,000", m["aec"].median, TARGET_AEC_STEPS, "steps/s"),
        row("state <= 4 KB per game", state_bytes, TARGET_STATE_BYTES, "bytes", True),
        row(
            "500 Rum vector env steps/s, 2 players >= 200,000",
            m["five_hundred_rum_vec2"].median,
            200_000,
            "steps/s",
        ),
        row(
            "Rummy 51 vector env steps/s, 2 players >= 200,000",
            m["rummy51_vec2"].median,
            200_000,
            "steps/s",
        ),
        row(
            "(e) `ppo_selfplay.py` training env steps/s >= 20,000 (2 cores)",
            m["train_gin_rummy_t2"].median,
            TARGET_TRAIN_SPS,
            "steps/s",
        ),
        row(
            "500 Rum training env steps/s, best features >= 10,000 (2 cores)",
            m["train_five_hundred_rum_t2"].median,
            TARGET_JOKER_TRAIN_SPS,
            "steps/s",
        ),
        row(
            "Rummy 51 training env steps/s, best features >= 10,000 (2 cores)",
            m["train_rummy51_t2"].median,
            TARGET_JOKER_TRAIN_SPS,
            "steps/s",
        ),
    ]
    for g, name in GAME_NAMES.items():
        rows.append(
            row(
                f"{name} `gymnasium.make` id, default opponent >= {fmt(TARGET_GYM[g])}",
                m[f"gym_{g}"].median,
                TARGET_GYM[g],
                "steps/s",
            )
        )
        rows.append(
            row(
                f"{name} `gymnasium.make_vec` id, {GYM_VEC_ENVS} envs >= {fmt(TARGET_GYM_VEC[g])}",
                m[f"gymvec_{g}"].median,
                TARGET_GYM_VEC[g],
                "steps/s",
            )
        )
    rows.append(
        row(
            f"README main job <= {TARGET_ARENA_S:.0f} s (warm cache)",
            m["arena_main"].median,
            TARGET_ARENA_S,
            "s",
            True,
        )
    )
    for g, name in GAME_NAMES.items():
        rows.append(
            row(
                f"{name} `ppo` vs `{PPO_ARENA_RULE[g]}` arena <= {TARGET_ARENA_S:.0f} s (warm)",
                m[f"arena_ppo_{g}"].median,
                TARGET_ARENA_S,
                "s",
                True,
            )
        )
    for g, name in GAME_NAMES.items():
        for key, what, limit in (
            (f"aec_{g}", "first AEC step", TARGET_FIRST_AEC_S),
            (f"gym_{g}", "first Gymnasium step", TARGET_FIRST_GYM_S),
        ):
            value = first_run(startup, key)
            rows.append(
                row(f"{name} {what}, empty cache <= {limit:.0f} s", value, limit, "s", True)
            )
    aec_mult = m["aec"].median / m["os_obs"].median if m["os_obs"].ok else float("nan")
    if aec_mult == aec_mult:
        rows.append(
            [
                "(c) AEC `env()` >= 3x OpenSpiel's loop (with observation)",
                f"{AEC_OPENSPIEL_MULTIPLE:.0f}x",
                f"{aec_mult:.2f}x",
                _status(aec_mult >= AEC_OPENSPIEL_MULTIPLE),
                "same run",
            ]
        )
    mult = m["vec"].median / m["os_obs"].median if m["os_obs"].ok else float("nan")
    if mult == mult:
        rows.append(
            [
                "(a) about 15x OpenSpiel's Python loop (with observation)",
                f"{OPENSPIEL_MULTIPLE:.0f}x",
                f"{mult:.1f}x",
                _status(mult >= OPENSPIEL_MULTIPLE),
                "informational",
            ]
        )
    rows.append(
        [
            "(b) vs published JAX engine on an A100 GPU",
            f"{fmt(JAX_A100_HANDS)} hands/s",
            f"{fmt(m['k_hands'].median)} hands/s",
            "info",
            ratio(m["k_hands"].median, JAX_A100_HANDS) + " (reference, not a target)",
        ]
    )
    return rows


def _status(passed: bool) -> str:
    return "**pass**" if passed else "**MISS**"


def render(
    result: dict[str, Any], sizes: Sizes, repeats: int, started: dt.datetime, command: str
) -> str:
    """The whole BENCHMARKS.md text."""
    m: dict[str, Measurement] = result["m"]
    startup: dict[str, Measurement] = result["startup"]
    mem_rows, state_bytes = memory_rows(result["obs_size"])

    def mrow(x: Measurement) -> list[str]:
        return [
            x.label,
            x.unit,
            fmt(x.median, x.unit),
            fmt(x.lo, x.unit),
            fmt(x.hi, x.unit),
            str(len(x.samples)),
            x.note,
        ]

    head = ["measurement", "unit", "median", "min", "max", "n", "note"]
    ours = [
        "vec",
        "vec1",
        "k_hands",
        "k_dec",
        "k_len",
        "k1_hands",
        "aec",
        "aec_hands",
        "aec_len",
        "aec_raw",
        "dw10",
        "dw11",
    ]
    peer_keys = [k + s for k in ("os_obs", "os", "rl") for s in ("", "_hands", "_len")]

    ratio_rows = []
    pairs = [
        ("(a) vector env steps/s", "vec", ""),
        ("(a) vector env steps/s, 1 thread", "vec1", ""),
        ("(b) kernel decisions/s", "k_dec", ""),
        ("(b) kernel hands/s", "k_hands", "_hands"),
        ("(b) kernel hands/s, 1 thread", "k1_hands", "_hands"),
        ("(c) AEC steps/s", "aec", ""),
        ("(c) AEC hands/s", "aec_hands", "_hands"),
        ("(c) AEC steps/s, raw_env (no wrappers)", "aec_raw", ""),
    ]
    for label, key, suffix in pairs:
        r = [label, fmt(m[key].median)]
        for peer in ("os_obs", "os", "rl"):
            r.append(ratio(m[key].median, m[peer + suffix].median))
        ratio_rows.append(r)

    st_rows = [
        mrow(startup[f"{key}_{kind}"])
        for key in (
            *(f"aec_{g}" for g, _, _ in STARTUP_GAMES),
            "vec",
            *(f"gym_{g}" for g in GAME_NAMES),
        )
        for kind in ("warm", "wall", "cold", "cold_compile")
        if f"{key}_{kind}" in startup
    ]

    os_obs = m["os_obs"].median
    door_rows = []
    for g, name in GAME_NAMES.items():
        aec_key = "aec" if g == "gin_rummy" else f"{g}_aec"
        raw_key = "aec_raw" if g == "gin_rummy" else f"{g}_aec_raw"
        aec_target = (
            f">= {fmt(TARGET_AEC_STEPS)} and >= {AEC_OPENSPIEL_MULTIPLE:.0f}x OpenSpiel"
            if g == "gin_rummy"
            else "reported"
        )
        for label, key, target, threshold in (
            (f"{name}: PettingZoo `env()`", aec_key, aec_target, TARGET_AEC_STEPS
             if g == "gin_rummy" else None),
            (f"{name}: `raw_env()` (no wrappers)", raw_key, "reported", None),
            (f"{name}: `gymnasium.make`, default opponent", f"gym_{g}",
             f">= {fmt(TARGET_GYM[g])}", TARGET_GYM[g]),
            (f"{name}: `gymnasium.make_vec`, {GYM_VEC_ENVS} envs", f"gymvec_{g}",
             f">= {fmt(TARGET_GYM_VEC[g])}", TARGET_GYM_VEC[g]),
        ):  # fmt: skip
            value = m[key].median
            status = "" if threshold is None or value != value else _status(value >= threshold)
            multiple, by_multiple = "", ""
            if threshold is not None:
                need = threshold / ISSUE_OPENSPIEL_OBS
                if key == "aec":
                    need = max(need, AEC_OPENSPIEL_MULTIPLE)
                multiple = f">= {need:.2f}x"
                if value == value and os_obs == os_obs:
                    by_multiple = _status(value / os_obs >= need)
            door_rows.append([label, fmt(value), ratio(value, os_obs), target, status, multiple,
                              by_multiple])  # fmt: skip
    cold_rows = []

    def median(key: str) -> float:
        found = startup.get(key)
        return found.median if found is not None else float("nan")

    for g, name in GAME_NAMES.items():
        for key, what, limit in (
            (f"aec_{g}", "first AEC step", TARGET_FIRST_AEC_S),
            (f"gym_{g}", "first `gymnasium.make` step", TARGET_FIRST_GYM_S),
        ):
            c = first_run(startup, key)
            status = "" if c != c else _status(c <= limit)
            cold_rows.append([f"{name}: {what}", fmt(median(f"{key}_cold"), "s"),
                              fmt(median(f"{key}_cold_compile"), "s"),
                              fmt(median(f"{key}_warm"), "s"), f"<= {limit:.0f} s",
                              status])  # fmt: skip
    build_s = prebuild_seconds()
    cold_rows.append(["the install's prebuild (`python -m rummy_agents.prebuild`, its manifest)",
                      fmt(build_s, "s") if build_s == build_s else "not built", "", "", "once, at "
                      "install", ""])  # fmt: skip
    a = m["arena_main"]
    cold_rows.append([f"README main job, all games ({a.note or 'not run'})", "", "",
                      fmt(a.median, "s"), f"<= {TARGET_ARENA_S:.0f} s warm",
                      _status(a.median <= TARGET_ARENA_S) if a.ok else ""])  # fmt: skip
    for g, name in GAME_NAMES.items():
        a = m[f"arena_ppo_{g}"]
        cold_rows.append([f"{name} `ppo` vs `{PPO_ARENA_RULE[g]}` arena ({a.note or 'not run'})",
                          "", "", fmt(a.median, "s"), f"<= {TARGET_ARENA_S:.0f} s warm",
                          _status(a.median <= TARGET_ARENA_S) if a.ok else ""])  # fmt: skip

    now = dt.datetime.now(dt.timezone.utc)
    parts = [
        "# Benchmarks",
        "",
        f"Generated by `experiments/benchmark.py` on {started:%Y-%m-%d %H:%M} UTC "
        f"(took {(now - started).total_seconds():.0f} s). Command:",
        "",
        f"```\n{command}\n```",
        "",
        f"Each figure is the median of {repeats} repeat(s) (min and max shown); the repeats of all "
        "measurements, ours and the peers', are interleaved in one process so machine noise hits "
        "every engine alike. The machine is shared and noisy: compare ratios rather than "
        "absolute numbers.",
        "",
        *(
            ["> **--quick run**: tiny sizes for a smoke test; the figures are not meaningful.", ""]
            if sizes.quick
            else []
        ),
        "## Machine",
        "",
        table(["item", "value"], [[k, v] for k, v in machine_info()]),
        "",
        "## Targets",
        "",
        table(
            ["target", "threshold", "measured (median)", "status", "margin"],
            target_rows(m, state_bytes, startup),
        ),  # fmt: skip
        "",
        "## Doors: where users meet the engine",
        "",
        table(
            [
                "door",
                "steps/s (median)",
                "/ OpenSpiel + obs, same run",
                "target",
                "status",
                "target as a multiple of OpenSpiel",
                "status by multiple",
            ],
            door_rows,
        ),  # fmt: skip
        "",
        "The last two columns read each target as the multiple of OpenSpiel's loop it was on "
        f"the machine that set it (OpenSpiel + obs {fmt(ISSUE_OPENSPIEL_OBS)} steps/s there, "
        "issue 52; `env()` also at least "
        f"{AEC_OPENSPIEL_MULTIPLE:.0f}x), against this run's OpenSpiel: a machine slower or "
        "faster than that one moves both engines alike.",
        "",
        "Each door as a user walks through it, in the same run as OpenSpiel's Python loop with "
        "`observation_tensor` (the peer that returns an observation each step): the AEC loop "
        "of (c) (`agent_iter`, `last()`, a random legal action drawn from the mask, `step`) "
        "for each game, and each Gymnasium id with its default rule opponent (`simple`, "
        "`greedy`, `greedy`), stepping random legal learner actions from `action_masks()` "
        "(the opponents' moves happen inside the step; learner steps are counted).",
        "",
        table(
            [
                "first run",
                "empty numba cache, the install's prebuilt kernels",
                "empty cache, prebuilt kernels off (compiles)",
                "warm cache",
                "target",
                "status",
            ],
            cold_rows,
        ),  # fmt: skip
        "",
        "First runs in a fresh interpreter, from `import` to the first step (`python -c`, see "
        "the start-up section), with an empty numba cache: loading the prebuilt kernels that "
        "the README's install builds (`pip install -e .` runs `python -m rummy_agents.prebuild "
        "--if-stale`, setup.py; the targets read this column), and with them turned off "
        "(`RUMMY_ENV_PREBUILT=0`: every kernel the step needs compiles, as before the install "
        "built them, or on a CPU without `x86-64-v3`). The prebuild row is the install's "
        "compile, from the tier's manifest (one run, on whatever the machine was doing then). "
        f"The main job is `{ARENA_COMMAND.format(deals=2000, out='DIR')}`, timed as a whole "
        "process.",
        "",
        "## Results: rummy_env",
        "",
        table(head, [mrow(m[k]) for k in ours]),
        "",
        f"Sizes: batch {sizes.batch}, {sizes.vec_steps} `venv.step` calls per repeat, "
        f"{sizes.kernel_episodes} hand(s) per game per kernel call, AEC loop "
        f"{sizes.seconds:g} s per repeat. Random legal actions for (a) are drawn with numpy "
        "outside the timed region; (b) draws them inside the kernel from each game's stream; "
        "(c) times the whole loop (`env.last()`, drawing the action, `env.step`, `env.reset`).",
        "",
        "## Results: Gin Rummy with 3 and 4 players",
        "",
        table(head, [mrow(m[f"gin_vec{n}"]) for n in (3, 4)]),
        "",
        "Same method as (a), default rules: 3 players play one table (the dealer sits out), 4 "
        "players two tables taking turns, each step one decision at the table to act. No peer "
        "engine has Gin Rummy for more than 2 players.",
        "",
        "## Results: 500 Rum",
        "",
        table(head, [mrow(m[f"five_hundred_rum_{k}"]) for k in ("vec2", "vec4", "vec8", "aec")]),
        "",
        "Same method as (a) and (c), default rules (one deck up to 4 players, two decks for 8), "
        "random legal actions. Neither RLCard nor OpenSpiel has 500 Rum, so there is no peer.",
        "",
        "## Results: Rummy 51",
        "",
        table(head, [mrow(m[f"rummy51_{k}"]) for k in ("vec2", "vec4", "vec6", "aec")]),
        "",
        "Same method, default rules (108 cards, 51-point opening), random legal actions (random "
        "players rarely open, so most of their steps are draws and discards; the exact opening "
        "search runs in every mask). No peer engine has Rummy 51.",
        "",
        "## Results: training throughput",
        "",
        table(head, [mrow(m[train_key(g, t)]) for g, _, t in TRAIN_GAMES]),
        "",
        "`python experiments/train_throughput.py --games G --num-envs N`, which runs "
        "`experiments/ppo_selfplay.py --game G --num-envs N --num-steps 32 --eval-every 0 ...` "
        "in a fresh interpreter with each game's best feature set (Gin: the defaults, MLP "
        "128x2 + card head; 500 Rum: `--features joker_cards_planner --hidden 256`, 3,697 "
        "inputs; Rummy 51: `--features joker_cards_melds --hidden 256`, 4,086 inputs): masked "
        "PPO over `make_vec`, half self-play, a quarter against past snapshots, a quarter "
        "against the rule agent (`simple`, `greedy`), on the CPU with 1 torch and 1 numba "
        "thread (the per-core rows), then with 2 each (`--threads 2`: the machine's two "
        "cores; the targets read these rows). Each sample is one update's env steps divided "
        "by its wall time (rollout with "
        "the network's and the opponents' moves, features, GAE, PPO epochs); the first update "
        "is dropped. It shares the machine with nothing else in this run, but not with other "
        "jobs on the machine.",
        "",
        "## Results: peers",
        "",
        table(head, [mrow(m[k]) for k in peer_keys]),
        "",
        f"Each peer plays whole hands with uniformly random legal actions for {sizes.seconds:g} s "
        "per repeat, from a Python loop, on one core. OpenSpiel chance nodes (deal, stock draws) "
        "are sampled from `chance_outcomes()` and not counted as steps. OpenSpiel lays out melds "
        "and lay-offs as explicit decisions, RLCard and rummy_env (default `auto_meld=True`) "
        "mostly do not, so decisions per hand differ somewhat between engines.",
        "",
        "## Ratios (rummy_env / peer, medians)",
        "",
        table(
            ["rummy_env figure", "median", "/ OpenSpiel + obs", "/ OpenSpiel", "/ RLCard"],
            ratio_rows,
        ),
        "",
        "Steps are compared with peer decision steps/s, hands with peer hands/s. rummy_env's "
        "(a), (b) and (d) use all numba threads; the 1-thread rows are the per-core figures.",
        "",
        "## Start-up: import to first step",
        "",
        table(head, st_rows),
        "",
        "Fresh interpreter (`python -c ...`): time from before `import rummy_env` to after the "
        "first `env.step` (AEC) or `venv.step` (vector env), with the numba on-disk cache "
        "already warm (an untimed run first writes it); the whole-process rows add interpreter "
        "start-up and exit. The cold rows point `NUMBA_CACHE_DIR` at an empty temp dir, as on "
        "a fresh machine or CI job: with prebuilt kernels (a wheel built after "
        "`python -m rummy_agents.prebuild`, `rummy_env.core.prebuilt`) the first step loads them; "
        "the compiled rows turn them off (`RUMMY_ENV_PREBUILT=0`), so every kernel the first "
        "step needs is compiled (`rummy_env.core.jit` and the batch layer's `settle` keep that "
        "down; `docs/benchmarks_full.md` has the history).",
        "",
        "## Memory per game (bytes)",
        "",
        table(["item", "bytes"], mem_rows),
        "",
        "## Build checks: serial vs parallel numba builds",
        "",
        table(
            ["entry point", "expected build", "threading layer after the call", "status"],
            result["checks"],
        ),
        "",
        "Each row calls one entry point in a fresh interpreter (numba cache as found) and reports "
        "whether numba's threading layer started, i.e. whether a parallel build ran. numba's "
        "on-disk cache keys entries by the Python function's name and bytecode, not by "
        "`parallel=`, so two dispatchers made from one function (`njit(...)(f)` and "
        "`njit(..., parallel=True)(f)`) load whichever build was cached first "
        "(numba issue #6845). A serial entry point running the parallel build pays an OpenMP "
        "fork/join per call (the AEC env steps one game at a time), and a parallel one running "
        "the serial build uses one core.",
        "",
    ]
    return "\n".join(parts)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--repeats", type=int, default=5, help="repeats per measurement (median)")
    p.add_argument("--batch", type=int, default=1024, help="games in the vector env / kernel")
    p.add_argument("--vec-steps", type=int, default=500, help="venv.step calls per repeat")
    p.add_argument("--episodes", type=int, default=5, help="hands per game per kernel call")
    p.add_argument("--deadwood-batch", type=int, default=100_000, help="hands per solver call")
    p.add_argument("--seconds", type=float, default=3.0, help="time budget per repeat (peers, AEC)")
    p.add_argument("--startup-repeats", type=int, default=None, help="default: --repeats")
    p.add_argument("--no-cold", action="store_true", help="skip the cold-cache start-up run")
    p.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    p.add_argument("--no-peers", action="store_true", help="skip RLCard and OpenSpiel")
    p.add_argument("--no-train", action="store_true", help="skip the ppo_selfplay.py throughput")
    p.add_argument("--output", type=Path, default=Path("BENCHMARKS.md"), help="markdown report")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and write the report."""
    args = parse_args(argv)
    LOAD_AT_START.append(load_average())
    started = dt.datetime.now(dt.timezone.utc)
    command = "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])])
    if args.quick:
        sizes = Sizes(64, 20, 1, 2000, 0.2, 1, False, quick=True, train=not args.no_train)
    else:
        sizes = Sizes(
            batch=args.batch,
            vec_steps=args.vec_steps,
            kernel_episodes=args.episodes,
            deadwood_batch=args.deadwood_batch,
            seconds=args.seconds,
            startup_repeats=args.startup_repeats or args.repeats,
            cold_startup=not args.no_cold,
            train=not args.no_train,
        )
    result = run_all(sizes, max(1, args.repeats), peers=not args.no_peers)
    text = render(result, sizes, max(1, args.repeats), started, command)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(text)
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
