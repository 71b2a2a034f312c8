"""Where a step of the AEC loop goes: microseconds per decision in each part of the standard
``agent_iter`` loop (the loop of ``experiments/benchmark.py``'s row (c)), for ``env()`` and
``raw_env()`` of each game.

Usage:
    python experiments/aec_breakdown.py                 # every game, 3 s per repeat, 3 repeats
    python experiments/aec_breakdown.py --games gin_rummy --seconds 2

Parts (each timed with ``time.perf_counter`` around it, so each also carries about 0.1 us of
timer overhead): ``next`` the iterator's ``__next__``, ``last`` ``env.last()`` (the observation
and mask built for the agent to act), ``pick`` drawing a random legal action from the mask
(the loop's own work, the same for every engine), ``step`` ``env.step(action)`` of a live agent,
``dead`` the dead steps at the end of a hand, ``reset`` ``env.reset()``; per decision that takes
an action. Medians over repeats; run it before and after a change on the same machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

PARTS = ("next", "last", "pick", "step", "dead", "reset")


def breakdown(game: str, raw: bool, seconds: float, seed: int = 2) -> dict[str, float]:
    """Microseconds per decision in each part, and the loop's steps/s (``"steps/s"``)."""
    import rummy_env

    module = rummy_env.ENV_MODULES[game]
    env = module.raw_env() if raw else module.env()
    env.reset(seed=seed)
    rnd = random.Random(seed)
    pc = time.perf_counter
    acc = dict.fromkeys(PARTS, 0.0)
    steps = 0
    t_start = pc()
    while pc() - t_start < seconds:
        it = iter(env.agent_iter())
        while True:
            t0 = pc()
            try:
                next(it)
            except StopIteration:
                break
            t1 = pc()
            obs, _r, term, trunc, _info = env.last()
            t2 = pc()
            acc["next"] += t1 - t0
            acc["last"] += t2 - t1
            if term or trunc:
                env.step(None)
                acc["dead"] += pc() - t2
                continue
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[int(rnd.random() * len(legal))])
            t3 = pc()
            env.step(action)
            acc["pick"] += t3 - t2
            acc["step"] += pc() - t3
            steps += 1
        t0 = pc()
        env.reset()
        acc["reset"] += pc() - t0
    total = pc() - t_start
    out = {k: v / steps * 1e6 for k, v in acc.items()}
    out["total"] = total / steps * 1e6
    out["steps/s"] = steps / total
    return out


def main(argv: list[str] | None = None) -> None:
    """Print a table of the parts of a step, per game and env kind."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--games", default="gin_rummy,five_hundred_rum,rummy51")
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    cases = [(g, raw) for g in args.games.split(",") for raw in (False, True)]
    for g, raw in cases:  # warm-up: compile or load the kernels
        breakdown(g, raw, 0.2)
    runs: dict[tuple[str, bool], list[dict[str, float]]] = {c: [] for c in cases}
    for _ in range(args.repeats):  # interleaved, so machine noise hits every case alike
        for c in cases:
            runs[c].append(breakdown(*c, args.seconds))
    cols = (*PARTS, "total", "steps/s")
    print("| env | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for (g, raw), rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in cols}
        cells = [f"{med[k]:.2f}" for k in cols[:-1]] + [f"{med['steps/s']:,.0f}"]
        print(f"| {g} `{'raw_env' if raw else 'env'}()` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
