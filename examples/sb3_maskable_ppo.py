"""MaskablePPO (sb3-contrib) on a rummy game against a fixed opponent, with before/after counts.

``RummySingleAgentEnv`` has the ``action_masks()`` method sb3-contrib's ``MaskablePPO`` looks
for, so masked PPO trains on it with no adapter; ``make_sb3_vec_env`` plays several games side
by side as one SB3 ``VecEnv``. The learner's seat is drawn at every reset; the opponent is
``--opponent`` (``random``: uniformly random legal play, or an agent name of the game such as
``simple`` for Gin Rummy). Rule options go in ``--option KEY=VALUE``.

The untrained policy and then the trained one play ``--eval-episodes`` episodes against the
same opponent, and each prints one line with the counts: an episode is won when the learner's
result is above every other seat's (Gin Rummy and 500 Rum: points; Rummy 51: fewer penalty
points), drawn on a tie for the best (a Gin dead hand), lost otherwise; an episode cut by
``max_steps`` is counted as truncated (``rummy_agents.integrations.evaluate`` counts them).

The defaults are the smallest setting that shows learning on a 2-core machine: Gin Rummy with
``knock_limit=30`` (knocks are legal with up to 30 deadwood points, so hands end in a knock and
every episode pays; with the standard limit of 10, untrained and random policies almost never
knock and nearly every hand is a dead hand, a draw) against uniformly random legal play.

::

    pip install -c constraints.txt "rummy_env[train]"
    python examples/sb3_maskable_ppo.py                  # the defaults: about a minute
    python examples/sb3_maskable_ppo.py --option knock_limit=10 --timesteps 1000000
    python examples/sb3_maskable_ppo.py --smoke          # a few hundred steps, for the tests

``experiments/train_sb3.py`` is the full training script (features, checkpoints, arena).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

from _common import add_game_arguments, at_least, describe_setting, game_options

# Only the standard library (and _common, which uses nothing else) is imported above:
# ``--help`` answers at once. numpy, torch, sb3-contrib and the games are imported in ``main``
# after the arguments are parsed.


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line; ``args.options`` is the game's rule options (defaults and ``--option``)."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_game_arguments(p)
    p.add_argument(
        "--opponent",
        default="random",
        help="'random' (uniform legal play) or an agent name of the game (rummy_agents.agent_spec)",
    )
    p.add_argument("--timesteps", type=at_least(1), default=40_000, help="learner decisions")
    p.add_argument("--envs", type=at_least(1), default=8, help="games played side by side")
    p.add_argument("--n-steps", type=at_least(1), default=256, help="decisions per env per update")
    p.add_argument("--hidden", type=at_least(1), nargs="+", default=[64, 64])
    p.add_argument("--lr", type=float, default=1e-3, help="learning rate")
    p.add_argument("--eval-episodes", type=at_least(1), default=200)
    p.add_argument("--save", default=None, help="save the model here (.zip)")
    p.add_argument(
        "--threads",
        type=at_least(1),
        default=None,
        help="torch threads (default: torch's own; 1 is often faster on a busy machine)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--smoke",
        action="store_true",
        help="512 steps, a small net and 20 evaluation episodes (the tests)",
    )
    args = p.parse_args(argv)
    if args.smoke:
        args.timesteps, args.envs, args.n_steps = 512, 2, 128
        args.hidden, args.eval_episodes = [32, 32], 20
    args.options = game_options(args)
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Evaluate the untrained policy, train, evaluate again; print and return both counts."""
    args = parse_args(argv)
    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO

    import rummy_agents
    from rummy_agents.integrations import evaluate, evaluation_line
    from rummy_env.wrappers import make_sb3_vec_env

    if args.threads:
        torch.set_num_threads(args.threads)
    opponent = (
        None
        if args.opponent == "random"
        else rummy_agents.agent_spec(args.opponent, game=args.game)
    )
    venv = make_sb3_vec_env(
        args.game, n_envs=args.envs, seed=args.seed, opponents=opponent, **args.options
    )
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=args.n_steps,
        batch_size=min(256, args.n_steps * args.envs),
        learning_rate=args.lr,
        gamma=1.0,  # one reward, at the end of the hand
        policy_kwargs={"net_arch": args.hidden},
        seed=args.seed,
        device="cpu",
        verbose=0,
    )

    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        action, _ = model.predict(observation, action_masks=mask, deterministic=True)
        return int(action)

    setting = describe_setting(args.game, args.options)
    results = {}

    def evaluation(label: str) -> None:
        r = evaluate(
            policy,
            args.game,
            opponents=opponent,
            episodes=args.eval_episodes,
            seed=args.seed + 10_000,
            **args.options,
        )
        print(evaluation_line(label, r, setting, args.opponent), flush=True)
        results[label] = r

    evaluation("before training")
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    print(f"trained {model.num_timesteps} steps in {time.perf_counter() - t0:.0f}s", flush=True)
    if args.save:
        model.save(args.save)
    evaluation("after training")
    return results


if __name__ == "__main__":
    main()
