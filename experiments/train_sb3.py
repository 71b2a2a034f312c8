"""Train sb3-contrib's MaskablePPO on any rummy game against fixed opponents.

The learner plays one seat (drawn at each reset) of ``RummySingleAgentEnv``; the other seats are
agents from ``agents/`` (registry names). ``n_envs`` games run side by side in a ``DummyVecEnv``.
At the end the model is saved (``model.zip``, loadable by ``rummy_agents.ppo_agent.PPOAgent``) and
evaluated greedily against the opponent.

    python experiments/train_sb3.py --game gin_rummy --opponent simple --timesteps 200000
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from rummy_agents.arena.registry import agent_spec, parse_value
from rummy_agents.arena.stats import wilson_interval
from rummy_agents.features import FeatureSet, default_features
from rummy_env.wrappers import RummySingleAgentEnv, make_sb3_vec_env

# rewards scaled to about [-1, 1] where the game offers it
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "gin_rummy": {"reward": "normalized"},
    "five_hundred_rum": {"reward": "normalized"},
}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--game", default="gin_rummy")
    p.add_argument("--opponent", default="random", help="agent registry name of the opponents")
    p.add_argument("--timesteps", type=int, default=100_000, help="learner decisions to train")
    p.add_argument("--n-envs", type=int, default=16)
    p.add_argument("--n-steps", type=int, default=256, help="rollout length per env")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--features", default=None, help="observation features (default per game)")
    p.add_argument("--option", action="append", default=[], help="rule option key=value")
    p.add_argument("--eval-games", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--out", default="runs/sb3")
    return p.parse_args()


def evaluate(model: MaskablePPO, env: RummySingleAgentEnv, games: int, seed: int) -> dict:
    """Greedy play for ``games`` episodes, learner seat alternating; win rate with a 95% Wilson
    interval (draws count as non-wins) and mean learner return."""
    wins = draws = 0
    returns = []
    for g in range(games):
        obs, _ = env.reset(seed=seed + g, options={"learner_seat": g % env.num_players})
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, r, term, trunc, info = env.step(int(action))
            assert not info["illegal_action"], "masked policy picked an illegal action"
            total += r
            done = term or trunc
        wins += total > 0
        draws += total == 0
        returns.append(total)
    lo, hi = wilson_interval(wins, games)
    return {
        "games": games,
        "win_rate": wins / games,
        "win_lo": lo,
        "win_hi": hi,
        "draw_rate": draws / games,
        "mean_return": float(np.mean(returns)),
    }


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    options = dict(DEFAULT_OPTIONS.get(args.game, {}))
    for kv in args.option:
        k, _, v = kv.partition("=")
        options[k] = parse_value(v)
    features = args.features or default_features(args.game)
    opponent = agent_spec(args.opponent, args.game)
    env_kwargs = dict(
        opponents=opponent, features=FeatureSet(args.game, features, options), **options
    )
    venv = make_sb3_vec_env(args.game, args.n_envs, seed=args.seed, **env_kwargs)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        ent_coef=args.ent_coef,
        gamma=1.0,
        policy_kwargs={"net_arch": [args.hidden, args.hidden]},
        seed=args.seed,
        device="cpu",
        verbose=1,
    )
    t0 = time.time()
    model.learn(total_timesteps=args.timesteps, progress_bar=False)
    train_s = time.time() - t0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model.zip")
    meta = {"game": args.game, "features": features, "options": options, "agent": "sb3"}
    (out / "model.json").write_text(json.dumps(meta, indent=2))
    eval_env = RummySingleAgentEnv(args.game, **env_kwargs)
    result = evaluate(model, eval_env, args.eval_games, seed=10**6 + args.seed)
    result.update({"timesteps": model.num_timesteps, "train_seconds": train_s, "args": vars(args)})
    (out / "eval.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "args"}, indent=2))


if __name__ == "__main__":
    main()
