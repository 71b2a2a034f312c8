"""Write a training checkpoint as a published agent file (``.npz``) and measure what the
smaller format changes: the share of decisions where it picks another action than the
full-precision network, over positions of the agent's own play against the game's baseline.

    python experiments/publish_agent.py runs/gin/agent.pt agents/published/gin_rummy.npz \
        --precision int8

The arena figures of the written file are then measured with
``rummy-env arena --game G --agents ppo@checkpoint=FILE,BASELINE`` (docs/agents.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import rummy_env
from rummy_agents.ppo_agent import PRECISIONS, PPOAgent, load_checkpoint, write_npz


def positions(agent: PPOAgent, game: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` (observation, mask) pairs of the agent playing every seat of the game."""
    venv = rummy_env.make_vec(game, 64, seed=seed)
    obs, _ = venv.reset()
    xs, ms = [], []
    while sum(len(x) for x in xs) < n:
        xs.append(obs["observation"])
        ms.append(obs["action_mask"])
        obs, *_ = venv.step(agent.act_batch(obs["observation"], obs["action_mask"]))
    return np.concatenate(xs)[:n], np.concatenate(ms)[:n]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint", help=".pt training checkpoint")
    p.add_argument("out", help=".npz file to write")
    p.add_argument("--precision", choices=PRECISIONS, default="int8")
    p.add_argument("--positions", type=int, default=20000)
    p.add_argument("--seed", type=int, default=12345)
    args = p.parse_args()
    meta, weights = load_checkpoint(args.checkpoint)
    keep = {k: v for k, v in meta.items() if not isinstance(v, list) or k != "averaged_from"}
    write_npz(args.out, keep, weights, args.precision)
    full = PPOAgent(checkpoint=args.checkpoint)
    small = PPOAgent(checkpoint=args.out)
    obs, masks = positions(full, meta["game"], args.positions, args.seed)
    a, b = full.act_batch(obs, masks), small.act_batch(obs, masks)
    kb = Path(args.out).stat().st_size / 1024
    print(f"{args.out}: {kb:,.0f} KiB ({args.precision}); {(a != b).mean():.4%} of "
          f"{len(a):,} decisions differ from {args.checkpoint}")  # fmt: skip


if __name__ == "__main__":
    main()
