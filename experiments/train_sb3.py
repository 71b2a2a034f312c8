"""Train sb3-contrib's MaskablePPO on any rummy game against fixed opponents.

The learner plays one seat (drawn at each reset) of ``RummySingleAgentEnv``; the other seats are
agents from ``agents/`` (registry names). ``n_envs`` games run side by side in a ``DummyVecEnv``.
At the end the model is saved (``model.zip``, loadable by ``rummy_agents.ppo_agent.PPOAgent``) and
evaluated greedily against the opponent.

    python experiments/train_sb3.py --game gin_rummy --opponent simple --timesteps 200000
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import torch
import tyro
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


# ``--option key=value``, repeatable: the rule options given on the command line
RuleOptionFlags = Annotated[
    list[str], tyro.conf.UseAppendAction, tyro.conf.arg(metavar="KEY=VALUE")
]


@dataclass
class Config:
    """Train sb3-contrib's MaskablePPO on a rummy game against fixed opponents."""

    game: str = "gin_rummy"
    opponent: str = "random"
    """Agent registry name of the opponents."""
    timesteps: int = 100_000
    """Learner decisions to train."""
    n_envs: int = 16
    """Games side by side (a DummyVecEnv)."""
    n_steps: int = 256
    """Rollout length per env."""
    batch_size: int = 1024
    lr: float = 3e-4
    ent_coef: float = 0.01
    hidden: int = 128
    """Width of the two hidden layers."""
    features: str | None = None
    """Observation features (default: the game's)."""
    option: RuleOptionFlags = field(default_factory=list)
    """A rule option, e.g. --option reward=raw."""
    eval_games: int = 200
    seed: int = 0
    threads: int = 1
    """Torch CPU threads."""
    out: str = "runs/sb3"


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


def main(args: list[str] | None = None) -> None:
    """Train and evaluate from the command line ``args`` (``sys.argv`` when None)."""
    cfg = tyro.cli(Config, args=args, description=__doc__)
    torch.set_num_threads(cfg.threads)
    options = dict(DEFAULT_OPTIONS.get(cfg.game, {}))
    for kv in cfg.option:
        k, _, v = kv.partition("=")
        options[k] = parse_value(v)
    features = cfg.features or default_features(cfg.game)
    opponent = agent_spec(cfg.opponent, cfg.game)
    env_kwargs = dict(
        opponents=opponent, features=FeatureSet(cfg.game, features, options), **options
    )
    venv = make_sb3_vec_env(cfg.game, cfg.n_envs, seed=cfg.seed, **env_kwargs)
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=cfg.n_steps,
        batch_size=cfg.batch_size,
        learning_rate=cfg.lr,
        ent_coef=cfg.ent_coef,
        gamma=1.0,
        policy_kwargs={"net_arch": [cfg.hidden, cfg.hidden]},
        seed=cfg.seed,
        device="cpu",
        verbose=1,
    )
    t0 = time.time()
    model.learn(total_timesteps=cfg.timesteps, progress_bar=False)
    train_s = time.time() - t0
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model.zip")
    meta = {"game": cfg.game, "features": features, "options": options, "agent": "sb3"}
    (out / "model.json").write_text(json.dumps(meta, indent=2))
    eval_env = RummySingleAgentEnv(cfg.game, **env_kwargs)
    result = evaluate(model, eval_env, cfg.eval_games, seed=10**6 + cfg.seed)
    result.update({"timesteps": model.num_timesteps, "train_seconds": train_s})
    result["args"] = dataclasses.asdict(cfg)
    (out / "eval.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "args"}, indent=2))


if __name__ == "__main__":
    main()
