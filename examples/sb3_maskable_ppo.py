"""MaskablePPO (sb3-contrib) on a rummy game against a fixed opponent.

``RummySingleAgentEnv`` has the ``action_masks()`` method sb3-contrib's ``MaskablePPO`` looks
for, so masked PPO trains on it with no adapter; ``make_sb3_vec_env`` plays several games side
by side as one SB3 ``VecEnv``. The learner's seat is drawn at every reset; the opponent is
``--opponent`` (``random``, or an agent name of the game such as ``simple`` for Gin Rummy). At
the end the policy plays ``--eval-episodes`` episodes against random legal play and the win
rate is printed.

::

    pip install -c constraints.txt "rummy_env[train]"
    python examples/sb3_maskable_ppo.py --game gin_rummy --opponent simple --timesteps 200000
    python examples/sb3_maskable_ppo.py --smoke          # a few hundred steps, for the tests

``experiments/train_sb3.py`` is the full training script (features, checkpoints, arena).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sb3_contrib import MaskablePPO

import rummy_agents
from rummy_agents.integrations import evaluate
from rummy_env.wrappers import make_sb3_vec_env


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Train, evaluate against random play, print the result (and return it)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", default="gin_rummy")
    p.add_argument(
        "--opponent",
        default="random",
        help="'random' or an agent name of the game (rummy_agents.agent_spec)",
    )
    p.add_argument("--timesteps", type=int, default=100_000, help="learner decisions")
    p.add_argument("--envs", type=int, default=8, help="games played side by side")
    p.add_argument("--n-steps", type=int, default=256, help="decisions per env per update")
    p.add_argument("--hidden", type=int, nargs="+", default=[256, 256])
    p.add_argument("--eval-episodes", type=int, default=20)
    p.add_argument("--save", default=None, help="save the model here (.zip)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--smoke",
        action="store_true",
        help="a few hundred steps and 4 evaluation games (the tests)",
    )
    args = p.parse_args(argv)
    if args.smoke:
        args.timesteps, args.envs, args.n_steps = 256, 2, 128
        args.hidden, args.eval_episodes = [32, 32], 4

    opponent = (
        None
        if args.opponent == "random"
        else rummy_agents.agent_spec(args.opponent, game=args.game)
    )
    kwargs = {"reward": "normalized"} if args.game == "gin_rummy" else {}
    venv = make_sb3_vec_env(
        args.game, n_envs=args.envs, seed=args.seed, opponents=opponent, **kwargs
    )
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=args.n_steps,
        batch_size=min(64, args.n_steps * args.envs),
        gamma=1.0,  # one reward, at the end of the hand
        policy_kwargs={"net_arch": args.hidden},
        seed=args.seed,
        device="cpu",
        verbose=0,
    )
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.timesteps)
    print(f"trained {model.num_timesteps} steps in {time.perf_counter() - t0:.0f}s")
    if args.save:
        model.save(args.save)

    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        action, _ = model.predict(observation, action_masks=mask, deterministic=True)
        return int(action)

    result = evaluate(policy, args.game, None, args.eval_episodes, args.seed + 10_000, **kwargs)
    print(
        f"evaluation (MaskablePPO vs random, {args.game}, {args.eval_episodes} episodes): "
        f"win rate {result['win_rate']:.2f}, loss rate {result['loss_rate']:.2f}, "
        f"mean return {result['mean_return']:.2f}"
    )
    return result


if __name__ == "__main__":
    main()
