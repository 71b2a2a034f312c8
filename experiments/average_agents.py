"""Average the weights of several saved players of one training run (stochastic weight averaging).

The players kept along a PPO run (``ppo_selfplay.py --keep-agents`` writes ``agent_<step>.pt``)
late in a run, at a small learning rate, lie close together; their mean is often a steadier
player than any one of them (Izmailov et al., 2018, "Averaging Weights Leads to Wider Optima
and Better Generalization"). The averaged file is an ordinary agent checkpoint:
``rummy-env arena --agents ppo@checkpoint=OUT,...`` plays it.

Example::

    python experiments/average_agents.py --out runs/gin_avg.pt runs/gin/agent_1*.pt
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

# what must agree for weights to be averaged: the network's shape and what it reads
_SAME = ("format", "game", "options", "features", "obs_size", "num_actions", "hidden", "layers",
         "card_inputs", "card_actions", "card_select", "card_hidden")  # fmt: skip


def average_checkpoints(paths: Sequence[str | Path]) -> dict[str, Any]:
    """The checkpoint whose weights are the mean of those of ``paths`` (meta of the last one,
    plus ``averaged_from``: the files' ``global_step`` values).

    Raises:
        ValueError: for fewer than one path, or checkpoints of different networks.
    """
    if not paths:
        raise ValueError("average_checkpoints needs at least one checkpoint")
    ckpts = [torch.load(p, map_location="cpu", weights_only=False) for p in paths]
    first = ckpts[0]
    for p, c in zip(paths[1:], ckpts[1:], strict=True):
        diff = [k for k in _SAME if c.get(k) != first.get(k)]
        if diff or c["state_dict"].keys() != first["state_dict"].keys():
            raise ValueError(f"{p} is not the same network as {paths[0]}: differs in {diff}")
    out = dict(ckpts[-1])
    out["state_dict"] = {
        k: torch.stack([c["state_dict"][k].float() for c in ckpts]).mean(0)
        for k in first["state_dict"]
    }
    out["averaged_from"] = [int(c.get("global_step", -1)) for c in ckpts]
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+", help="agent files of one run (agent_<step>.pt)")
    ap.add_argument("--out", required=True, help="where to write the averaged agent")
    args = ap.parse_args(argv)
    ckpt = average_checkpoints(args.checkpoints)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, args.out)
    print(f"averaged {len(args.checkpoints)} agents (steps {ckpt['averaged_from']}) -> {args.out}")


if __name__ == "__main__":
    main()
