"""Which of a clone's moves cost it games? Play the clone with its teacher's moves of some kinds.

The learner (a ``ppo`` checkpoint) plays seat ``i % 2`` of game ``i`` against ``greedy``. At each
of its decisions the teacher is asked too, and where the teacher's move is of a kind in
``--kinds`` (draw, meld, layoff, discard) that move is played instead of the clone's. Every
game is played once to its end (games to 500, ``episode="game"``), so long games count as much
as short ones. The win rate with a kind taken from the teacher, against the rate with none,
shows what the clone's moves of that kind cost it.

Example (the figures quoted in docs/experiments.md)::

    python experiments/teacher_moves.py --agent published --kinds meld
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rummy_env
from rummy_agents.arena.registry import make_agent
from rummy_env.encodings import five_hundred_rum as E

KINDS = ("draw", "meld", "layoff", "discard")


def action_kinds(lay: E.Layout) -> np.ndarray:
    """The kind of every 500 Rum action id (passing counts as a draw)."""
    kind = np.full(lay.num_actions, "discard", dtype=object)
    kind[[lay.draw_stock, lay.pass_action]] = "draw"
    kind[lay.take_base : lay.meld_base] = "draw"
    kind[lay.meld_base : lay.layoff_base] = "meld"
    kind[lay.layoff_base : lay.discard_base] = "layoff"  # naturals and jokers
    return kind


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--agent", required=True, help="the clone's .pt checkpoint ('published': the game's)"
    )
    p.add_argument("--teacher", default="greedy@hold_melds=3")
    p.add_argument("--opponent", default="greedy")
    p.add_argument("--kinds", default="", help=f"comma-separated, of {', '.join(KINDS)}")
    p.add_argument("--games", type=int, default=300)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args()
    kinds = {k for k in args.kinds.split(",") if k}
    if kinds - set(KINDS):
        p.error(f"unknown kinds {sorted(kinds - set(KINDS))}; choose from {', '.join(KINDS)}")

    n = args.games
    game = "five_hundred_rum"
    venv = rummy_env.make_vec(game, n, seed=args.seed, reward="normalized", episode="game")
    obs, info = venv.reset()
    teacher = make_agent(args.teacher, seed=1, game=game)
    opponent = make_agent(args.opponent, seed=2, game=game)
    spec = "ppo" if args.agent == "published" else f"ppo@checkpoint={args.agent}"
    learner = make_agent(spec, seed=1, game=game)
    kind = action_kinds(E.Layout(2, 54))
    seat = np.arange(n) % 2
    won = np.zeros(n, bool)
    finished = np.zeros(n, bool)
    t0 = time.time()

    def rows_act(agent, rows: np.ndarray) -> np.ndarray:
        o, m = obs["observation"][rows], obs["action_mask"][rows]
        if hasattr(agent, "act_batch"):
            return np.asarray(agent.act_batch(o, m))
        return np.array(
            [agent.act({"observation": o[j], "action_mask": m[j]}) for j in range(len(rows))]
        )

    while not finished.all():
        mine = info["current_player"] == seat
        act = np.zeros(n, np.int64)
        if (~mine).any():
            act[~mine] = rows_act(opponent, np.flatnonzero(~mine))
        if mine.any():
            rows = np.flatnonzero(mine)
            a = rows_act(learner, rows)
            if kinds:
                t = rows_act(teacher, rows)
                a = np.where([k in kinds for k in kind[t]], t, a)
            act[rows] = a
        obs, rew, term, trunc, info = venv.step(act)
        for i in np.flatnonzero((term | trunc) & ~finished):
            finished[i] = True
            won[i] = rew[i, seat[i]] > 0
    print(
        f"teacher's {sorted(kinds) or 'none'}: learner won {won.mean():.1%} of {n} games to 500 "
        f"against {args.opponent} (seed {args.seed}, {time.time() - t0:.0f} s)"
    )


if __name__ == "__main__":
    main()
