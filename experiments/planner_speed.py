"""Speed of 500 Rum's meld planner: the Python ``MeldPlanner`` against the compiled one.

Usage:
    python experiments/planner_speed.py            # about a minute on a 2-core machine
    python experiments/planner_speed.py --positions 500 --repeats 3   # shorter

Measured (each a median over ``--repeats`` runs, the runs of the two planners interleaved):

- planner positions/s on the same positions (play-phase positions of ``greedy`` self-play, 2
  players; then random 7-15 card hands with 0-2 jokers and no table, longer searches):
  ``MeldPlanner.best``, ``CompiledMeldPlanner.best`` (one call a position, from Python lists)
  and ``CompiledMeldPlanner.best_batch`` (one call for all);
- ``greedy``'s decisions/s in self-play, with either planner (the same decisions);
- the ``joker_cards_planner`` features' positions/s on observations of heuristic and random
  play (the ``plan`` block alone, and the whole feature set), with the plan melds computed by
  the Python planner (as before) or by the kernel;
- Rummy 51: ``Rummy51Planner.best`` against ``CompiledRummy51Planner.best`` on the play
  positions of ``greedy`` self-play (as the agent plans them), and ``greedy``'s decisions/s.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import rummy_env
from rummy_agents.base import SeatView
from rummy_agents.features import FeatureSet
from rummy_agents.features import joker_cards as J
from rummy_agents.five_hundred_rum_greedy import (
    FiveHundredRumGreedyAgent,
    Meld,
    MeldPlanner,
    obligation,
    table_melds,
    turn_plan,
)
from rummy_agents.heuristic import HeuristicAgent
from rummy_agents.planner_kernels import CompiledMeldPlanner, CompiledRummy51Planner
from rummy_agents.rummy51_greedy import Rummy51GreedyAgent, Rummy51Planner
from rummy_env import five_hundred_rum_v1, rummy51_v1
from rummy_env.encodings import five_hundred_rum as E
from rummy_env.encodings import rummy51 as E51

Position = tuple[list[int], list[Meld], int]


def greedy_positions(n: int, seed: int = 0) -> list[Position]:
    """Play-phase positions (hand, table, obligation) of 2-player greedy self-play."""
    env = five_hundred_rum_v1.raw_env()
    agents = [FiveHundredRumGreedyAgent(seed=q) for q in range(2)]
    out: list[Position] = []
    deal = seed
    env.reset(seed=deal)
    while len(out) < n:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            deal += 1
            env.reset(seed=deal)
            continue
        obs = env.observe(name)
        parts = env.layout.split(obs["observation"])
        if int(np.argmax(parts["phase"])) in (E.PH_PLAY, E.PH_CALL_LAYOFF):
            hand = [int(v) for v in np.rint(parts["hand"] * 2)]
            out.append((hand, table_melds(parts), obligation(parts)))
        env.step(agents[env.agents.index(name)].act(obs, SeatView(env, name)))
    return out


def random_hands(n: int, seed: int = 0) -> list[Position]:
    """Random hands of 7-15 cards from a pack with 2 jokers, with an empty table."""
    rng = np.random.default_rng(seed)
    out: list[Position] = []
    for _ in range(n):
        hand = [0] * 53
        for c in rng.choice(54, int(rng.integers(7, 16)), replace=False):
            hand[min(int(c), 52)] += 1
        out.append((hand, [], -1))
    return out


def planner_rates(label: str, pos: list[Position], reps: int) -> None:
    """Positions/s of the Python planner, the compiled one call by call and batched."""
    py, cp = MeldPlanner(), CompiledMeldPlanner()
    hands = np.array([p[0] for p in pos], np.int64)
    m = max(len(p[1]) for p in pos)
    tables = np.zeros((len(pos), max(m, 1), 6), np.int64)
    for i, p in enumerate(pos):
        if p[1]:
            tables[i, : len(p[1])] = p[1]
    obl = np.array([p[2] for p in pos], np.int64)
    cp.best_batch(hands[:8], tables[:8], obl[:8])  # compile (or load the cache)
    cp.best(*pos[0])
    t_py, t_one, t_batch = [], [], []
    for _ in range(reps):
        t_py.append(timed(lambda: [py.best(*p) for p in pos]))
        t_one.append(timed(lambda: [cp.best(*p) for p in pos]))
        t_batch.append(timed(lambda: cp.best_batch(hands, tables, obl)))
    print(f"planner, {len(pos)} {label} (positions/s):")
    print(f"  MeldPlanner.best                {median_rate(t_py, len(pos))}")
    print(f"  CompiledMeldPlanner.best        {median_rate(t_one, len(pos))}")
    print(f"  CompiledMeldPlanner.best_batch  {median_rate(t_batch, len(pos))}")


def rummy51_positions(n: int, seed: int = 0) -> list[tuple[list[int], list[Meld], dict]]:
    """Play-phase plans of 2-player Rummy 51 greedy self-play: (hand, table, keyword
    arguments of ``Rummy51Planner.best``) as the agent asks for them.
    """
    env = rummy51_v1.raw_env()
    agents = [Rummy51GreedyAgent(seed=q) for q in range(2)]
    out: list[tuple[list[int], list[Meld], dict]] = []
    deal = seed
    env.reset(seed=deal)
    while len(out) < n:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            deal += 1
            env.reset(seed=deal)
            continue
        obs = env.observe(name)
        parts = env.layout.split(obs["observation"])
        if int(np.argmax(parts["phase"])) == E51.PH_PLAY:
            opened = bool(parts["opened"][0] > 0.5)
            laid = 0 if opened else int(round(float(parts["opening_points"][0]) * 51))
            ob = parts["obligation"]
            tk = parts["taken_single"]
            kw = {
                "opened": opened,
                "need": 51 - laid,
                "must_open": laid > 0 or ob.max() > 0.5,
                "oblig": int(np.argmax(ob)) if ob.max() > 0.5 else -1,
                "taken": int(np.argmax(tk)) if tk.max() > 0.5 else -1,
            }
            hand = [int(v) for v in np.rint(parts["hand"] * 2)]
            out.append((hand, table_melds(parts), kw))
        env.step(agents[env.agents.index(name)].act(obs, SeatView(env, name)))
    return out


def greedy_decisions(agents: list[Any], n: int, env_module: Any = five_hundred_rum_v1) -> float:
    """Seconds ``agents`` spend in ``act`` over ``n`` decisions of self-play (deals 0, 1, ...)."""
    env = env_module.raw_env()
    deal = 0
    env.reset(seed=deal)
    spent = 0.0
    for _ in range(n):
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            deal += 1
            env.reset(seed=deal)
            name = env.agent_selection
        obs, view = env.observe(name), SeatView(env, name)
        t = time.perf_counter()
        a = agents[env.agents.index(name)].act(obs, view)
        spent += time.perf_counter() - t
        env.step(a)
    return spent


def play_observations(n: int, seed: int = 3) -> np.ndarray:
    """``n`` observations of 64 games of heuristic play with 30% random moves."""
    venv = rummy_env.make_vec("five_hundred_rum", 64, seed=seed)
    obs, _ = venv.reset()
    agent = HeuristicAgent(seed=0)
    rng = np.random.default_rng(seed)
    rows = []
    while sum(r.shape[0] for r in rows) < n:
        rows.append(obs["observation"].copy())
        a = agent.act_game(venv.game)
        for i in np.flatnonzero(rng.random(64) < 0.3):
            a[i] = rng.choice(np.flatnonzero(obs["action_mask"][i]))
        obs, *_ = venv.step(a)
    return np.ascontiguousarray(np.concatenate(rows)[:n], np.float32)


def python_plan_block(obs: np.ndarray, out: np.ndarray, layout: E.Layout) -> None:
    """``joker_cards.plan_block`` as it was, planning each position with ``MeldPlanner``."""
    planner = _PY_PLANNER
    out[:] = 0.0
    phase = obs[:, layout.offset("phase") : layout.offset("phase") + E.PH_OVER] > 0.5
    o = layout.offset("hand_sizes")
    short = np.rint(obs[:, o + 1 : o + layout.num_players] * 13).min(axis=1).astype(np.int64)
    rows = np.flatnonzero(phase.any(axis=1))
    out[rows, J.NUM_TEMPLATES + np.minimum(short[rows], J.SHORTEST_BINS - 1)] = 1.0
    for i in np.flatnonzero(phase[:, E.PH_PLAY] | phase[:, E.PH_CALL_LAYOFF]):
        parts = layout.split(obs[i])
        hand = [int(v) for v in np.rint(parts["hand"] * 2)]
        plan = turn_plan(planner, hand, table_melds(parts), obligation(parts))
        for kind, t, _ in plan.steps if plan is not None else ():
            if kind == "meld":
                out[i, t] = 1.0


_PY_PLANNER = MeldPlanner(False)


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def median_rate(times: list[float], n: int) -> str:
    rates = sorted(n / t for t in times)
    return f"{statistics.median(rates):>12,.0f}/s  (min {rates[0]:,.0f}, max {rates[-1]:,.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=2000)
    ap.add_argument("--decisions", type=int, default=600)
    ap.add_argument("--observations", type=int, default=2048)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    reps = args.repeats

    planner_rates("play positions of greedy self-play", greedy_positions(args.positions), reps)
    planner_rates("random 7-15 card hands", random_hands(args.positions), reps)

    n = args.decisions
    t_gpy, t_gcp = [], []
    for _ in range(reps):
        ref = [FiveHundredRumGreedyAgent(seed=q) for q in range(2)]
        for a in ref:
            a._planners = {v: MeldPlanner(v) for v in (False, True)}
        t_gpy.append(greedy_decisions(ref, n))
        t_gcp.append(greedy_decisions([FiveHundredRumGreedyAgent(seed=q) for q in range(2)], n))
    print(f"greedy self-play, {n} decisions (decisions/s):")
    print(f"  with MeldPlanner                {median_rate(t_gpy, n)}")
    print(f"  with CompiledMeldPlanner        {median_rate(t_gcp, n)}")

    x = play_observations(args.observations)
    lay = E.Layout(2, 54)
    fs = FeatureSet("five_hundred_rum", "joker_cards_planner")
    out = np.zeros((x.shape[0], J.PLAN_BLOCK), np.float32)
    fs(x[:64])
    compiled_block = J.plan_block
    t_bpy, t_bcp, t_fpy, t_fcp = [], [], [], []
    for _ in range(reps):
        t_bpy.append(timed(lambda: python_plan_block(x, out, lay)))
        t_bcp.append(timed(lambda: compiled_block(x, out, lay)))
        J.plan_block = python_plan_block
        try:
            t_fpy.append(timed(lambda: fs(x)))
        finally:
            J.plan_block = compiled_block
        t_fcp.append(timed(lambda: fs(x)))
    plays = int((x[:, lay.offset("phase") + E.PH_PLAY] > 0.5).sum())
    print(f"features, {x.shape[0]} observations of heuristic/random play ({plays} in the play")
    print("phase) (positions/s):")
    print(f"  plan block, MeldPlanner         {median_rate(t_bpy, x.shape[0])}")
    print(f"  plan block, kernel              {median_rate(t_bcp, x.shape[0])}")
    print(f"  joker_cards_planner, MeldPlanner {median_rate(t_fpy, x.shape[0])}")
    print(f"  joker_cards_planner, kernel     {median_rate(t_fcp, x.shape[0])}")

    pos51 = rummy51_positions(args.positions)
    py51, cp51 = Rummy51Planner(), CompiledRummy51Planner()
    cp51.best(pos51[0][0], pos51[0][1], **pos51[0][2])
    t_py, t_cp = [], []
    for _ in range(reps):
        t_py.append(timed(lambda: [py51.best(h, t, **kw) for h, t, kw in pos51]))
        t_cp.append(timed(lambda: [cp51.best(h, t, **kw) for h, t, kw in pos51]))
    print(f"Rummy 51 planner, {len(pos51)} play positions of greedy self-play (positions/s):")
    print(f"  Rummy51Planner.best             {median_rate(t_py, len(pos51))}")
    print(f"  CompiledRummy51Planner.best     {median_rate(t_cp, len(pos51))}")
    t_gpy, t_gcp = [], []
    for _ in range(reps):
        ref = [Rummy51GreedyAgent(seed=q) for q in range(2)]
        for a in ref:
            a.planner = Rummy51Planner()
        t_gpy.append(greedy_decisions(ref, n, rummy51_v1))
        t_gcp.append(
            greedy_decisions([Rummy51GreedyAgent(seed=q) for q in range(2)], n, rummy51_v1)
        )
    print(f"Rummy 51 greedy self-play, {n} decisions (decisions/s):")
    print(f"  with Rummy51Planner             {median_rate(t_gpy, n)}")
    print(f"  with CompiledRummy51Planner     {median_rate(t_gcp, n)}")


if __name__ == "__main__":
    main()
