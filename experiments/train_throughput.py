"""Training throughput of ``ppo_selfplay.py``: env steps/s per PPO update, per game, with each
game's best feature set (the published agents' inputs and network width).

Each game runs ``ppo_selfplay.py`` in a fresh interpreter for ``updates + 1`` updates of
``num_envs`` games x 32 steps and reads its ``progress.csv``: a sample is one update's env steps
divided by its wall time (rollout with the network's moves and the opponents', features, GAE,
the PPO epochs); the first update (numba and torch warming up) is dropped. The games are the
script's defaults: half self-play, a quarter against past snapshots, a quarter against the
game's rule agent (``simple`` in Gin, ``greedy`` in the joker games).
``experiments/benchmark.py`` uses it for BENCHMARKS.md; run it alone for another machine::

    python experiments/train_throughput.py --device cuda --num-envs 2048 --out gpu.md
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

GAMES = ("gin_rummy", "five_hundred_rum", "rummy51")

RECIPES: dict[str, list[str]] = {
    "gin_rummy": [],
    "five_hundred_rum": ["--features", "joker_cards_planner", "--hidden", "256"],
    "rummy51": ["--features", "joker_cards_melds", "--hidden", "256"],
}
"""Each game's network inputs and width, as its published agent has them (Gin: the default
features and network)."""

NAMES = {"gin_rummy": "Gin", "five_hundred_rum": "500 Rum", "rummy51": "Rummy 51"}


def command(
    game: str, num_envs: int, updates: int, device: str, threads: int, out: str
) -> list[str]:
    """The ``ppo_selfplay.py`` command line of one measurement."""
    script = Path(__file__).resolve().parent / "ppo_selfplay.py"
    return [
        sys.executable, str(script), "--game", game, *RECIPES[game],
        "--num-envs", str(num_envs), "--num-steps", "32",
        "--total-steps", str(num_envs * 32 * (updates + 1)),
        "--eval-every", "0", "--eval-games", "16", "--device", device,
        "--torch-threads", str(threads), "--numba-threads", str(threads),
        "--no-progress", "--no-tensorboard", "--out", out,
    ]  # fmt: skip


def measure(
    game: str, num_envs: int, updates: int, device: str = "cpu", threads: int = 1
) -> tuple[list[float], str]:
    """Env steps/s of each update but the first, and "" (or no samples and why it failed)."""
    with tempfile.TemporaryDirectory(prefix="ppo_tp_") as tmp:
        res = subprocess.run(
            command(game, num_envs, updates, device, threads, tmp), capture_output=True, text=True
        )
        if res.returncode != 0:
            last = res.stderr.strip().splitlines()[-1:] or [f"exit code {res.returncode}"]
            return [], f"failed: {last[0]}"
        with open(Path(tmp) / "progress.csv", newline="") as f:
            rows = list(csv.DictReader(f))
    sps = [float(r["sps"]) for r in rows]
    return (sps[1:] or sps), ""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", nargs="+", default=list(GAMES), choices=GAMES)
    p.add_argument("--device", default="cpu", help="torch device of the network (cpu, cuda)")
    p.add_argument("--num-envs", type=int, default=512, help="games stepped together")
    p.add_argument("--updates", type=int, default=6, help="updates measured (one more is run)")
    p.add_argument("--threads", type=int, default=1, help="torch and numba threads")
    p.add_argument("--out", type=Path, help="also write the table to this markdown file")
    args = p.parse_args()
    lines = [
        "| game | inputs | games x steps | device | threads | steps/s median | min | max | n |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for game in args.games:
        sps, why = measure(game, args.num_envs, args.updates, args.device, args.threads)
        feats = " ".join(RECIPES[game]) or "defaults"
        head = (
            f"| {NAMES[game]} | {feats} | {args.num_envs:,} x 32 | {args.device} | {args.threads}"
        )
        if sps:
            lines.append(
                f"{head} | {statistics.median(sps):,.0f} | {min(sps):,.0f} | {max(sps):,.0f} "
                f"| {len(sps)} |"
            )
        else:
            lines.append(f"{head} | {why} | | | 0 |")
        print(lines[-1], flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
