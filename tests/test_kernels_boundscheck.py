"""The hot uncounted kernels of the rule agents, compiled with numba's bounds checking
(``NUMBA_BOUNDSCHECK=1``, in a subprocess with its own empty cache and no prebuilt tier): an
index past an array's end raises ``IndexError`` there instead of reading whatever memory
follows (a packed candidate used as an index once read past a table and crashed a process
now and then, while the differential tests passed).

Covered: the Gin rule agents' decisions (``act_rows``: novice, simple, planner) on positions
of random play in every phase, the planners' searches in kept buffers (``plan_best_in``,
``plan_turn_in``, ``plan_best51_in``, ``plan_best51_memo`` with buffers) on random hands, and
``next_legal``. Each answer is also compared with the same call compiled without the checks
(this process), so the checked build decides the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import rummy_env
from rummy_agents.gin_rummy_rules import (
    GinRummyNoviceAgent,
    GinRummyPlannerAgent,
    GinRummySimpleAgent,
)

AGENTS = {"novice": GinRummyNoviceAgent, "simple": GinRummySimpleAgent}
AGENTS["planner"] = GinRummyPlannerAgent

CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from rummy_agents.gin_rummy_rules import (
        GinRummyNoviceAgent, GinRummyPlannerAgent, GinRummySimpleAgent)
    from rummy_agents.joker_greedy_kernels import next_legal
    from rummy_agents.planner_kernels import (
        card_values, plan_best51_in, plan_best51_memo, plan_best_in, plan_turn_in,
        plan51_memo, plan_work)

    data = np.load(sys.argv[1])
    out = {}
    agents = {"novice": GinRummyNoviceAgent, "simple": GinRummySimpleAgent,
              "planner": GinRummyPlannerAgent}
    for name, cls in agents.items():
        out[name] = cls(seed=3).act_batch(data["obs"], data["masks"]).tolist()
    plans = []
    vals = card_values(False)
    memo = plan51_memo(12, 32)
    for work in (plan_work(32, 12), plan_work(4, 2)):
        for hand, table, ob in zip(data["hands"], data["tables"], data["obligs"]):
            steps = np.zeros((120, 3), np.int64)
            left = np.zeros(53, np.int64)
            plans.append(plan_best_in(work, hand, table, ob, True, vals, 1, 300, steps, left))
            plans.append(plan_turn_in(work, hand, table, ob, True, vals, 1, 300, steps, left))
            plans.append(plan_best51_in(work, hand, table, False, 51, False, ob, -1, True, 300,
                                        steps, left))
            plans.append(plan_best51_memo(memo, hand, table, True, 0, False, ob, -1, True, 300,
                                          steps, left, work))
    out["plans"] = [[int(x) for x in p] for p in plans]
    masks = data["masks"]
    out["next"] = [int(next_legal(masks, b, lo, masks.shape[1]))
                   for b in range(masks.shape[0]) for lo in (0, 3, 9)]
    print(json.dumps(out))
    """
)


def _positions(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to act in random Gin games (every phase)."""
    env = rummy_env.make_vec("gin_rummy", 16, seed=11, auto_meld=False)
    rng = np.random.default_rng(11)
    obs, _ = env.reset()
    rows_o, rows_m = [], []
    while sum(len(o) for o in rows_o) < n:
        rows_o.append(obs["observation"].copy())
        rows_m.append(obs["action_mask"].copy())
        mask = obs["action_mask"]
        obs, *_ = env.step((rng.random(mask.shape) * mask).argmax(1))
    return np.concatenate(rows_o)[:n], np.concatenate(rows_m)[:n].astype(np.int8)


def _hands(rng: np.random.Generator, n: int = 60) -> tuple[np.ndarray, ...]:
    hands = np.zeros((n, 53), np.int64)
    tables = np.zeros((n, 12, 6), np.int64)
    obligs = np.full(n, -1, np.int64)
    for i in range(n):
        size = int(rng.integers(2, 16))
        for c in rng.choice(52, size=size):
            hands[i, c] = min(hands[i, c] + 1, 2)
        hands[i, 52] = int(rng.integers(0, 3))
        if rng.random() < 0.5:
            s = int(rng.integers(4))
            lo = int(rng.integers(0, 9))
            tables[i, 0] = (2, s, lo, lo + 2, 0b111 << lo, 0)  # a run of three
        if rng.random() < 0.3:
            obligs[i] = int(rng.choice(np.flatnonzero(hands[i])))
    return hands, tables, obligs


def test_rule_agents_and_planners_stay_in_bounds(tmp_path: Path) -> None:
    from rummy_agents.joker_greedy_kernels import next_legal
    from rummy_agents.planner_kernels import (
        card_values,
        plan51_memo,
        plan_best51_in,
        plan_best51_memo,
        plan_best_in,
        plan_turn_in,
        plan_work,
    )

    obs, masks = _positions()
    hands, tables, obligs = _hands(np.random.default_rng(5))
    data = tmp_path / "positions.npz"
    np.savez(data, obs=obs, masks=masks, hands=hands, tables=tables, obligs=obligs)
    env = dict(
        os.environ,
        NUMBA_BOUNDSCHECK="1",
        NUMBA_CACHE_DIR=str(tmp_path / "cache"),
        RUMMY_ENV_PREBUILT="0",
    )
    env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(data)],
        env=env,
        capture_output=True,
        text=True,
        timeout=880,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    checked = json.loads(done.stdout.strip().splitlines()[-1])
    for name, cls in AGENTS.items():
        assert checked[name] == cls(seed=3).act_batch(obs, masks).tolist(), name
    plans = []
    vals = card_values(False)
    memo = plan51_memo(12, 32)
    for work in (plan_work(32, 12), plan_work(4, 2)):
        for hand, table, ob in zip(hands, tables, obligs, strict=True):
            steps = np.zeros((120, 3), np.int64)
            left = np.zeros(53, np.int64)
            args = (hand, table, ob, True, vals, 1, 300, steps, left)
            plans.append(plan_best_in(work, *args))
            plans.append(plan_turn_in(work, *args))
            args51 = (hand, table, False, 51, False, ob, -1, True, 300, steps, left)
            plans.append(plan_best51_in(work, *args51))
            args51 = (hand, table, True, 0, False, ob, -1, True, 300, steps, left, work)
            plans.append(plan_best51_memo(memo, *args51))
    assert checked["plans"] == [[int(x) for x in p] for p in plans]
    expect = [
        int(next_legal(masks, b, lo, masks.shape[1]))
        for b in range(masks.shape[0])
        for lo in (0, 3, 9)
    ]
    assert checked["next"] == expect
