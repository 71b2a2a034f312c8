"""What a run reports: evaluations against a fixed agent, ``progress.csv`` (and TensorBoard
when installed) one row per update, and the learning curve.

Every ``eval_every`` updates the greedy policy plays ``eval_games`` games against the
evaluation baseline (seats alternating): the win rate with a 95% Wilson interval goes to the
update's row, and the curve to ``learning_curve.png``.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

import rummy_env
from rummy_agents.arena.registry import make_agent
from rummy_agents.arena.stats import wilson_interval
from rummy_agents.features import add_features
from rummy_agents.ppo_net import MaskedActorCritic
from selfplay.config import Config
from selfplay.opponents import batched, policy_actions

# the columns of progress.csv
COLUMNS = [
    "update", "global_step", "elapsed_s", "sps", "lr", "policy_loss", "value_loss",
    "entropy", "approx_kl", "clipfrac", "explained_variance", "teacher_coef",
    "teacher_loss", "teacher_agreement", "train_samples",
    "episodes", "selfplay_return", "pool_return", "baseline_return", "pool_size",
    "eval_games", "eval_win_rate", "eval_win_lo", "eval_win_hi", "eval_draw_rate",
    "eval_decisive_win_rate", "eval_mean_return", "eval_mean_margin",
]  # fmt: skip


class ProgressLog:
    """``progress.csv`` in ``out``, and TensorBoard under ``out/tb`` when ``tensorboard`` and it
    is installed.

    A resumed run passes ``resume_after``, the update of its checkpoint: the file's rows up to it
    are kept and later ones (written before the run was stopped past that checkpoint) dropped,
    since those updates are played again. A new run starts the file afresh.
    """

    def __init__(self, out: Path, resume_after: int | None, tensorboard: bool) -> None:
        self.path = out / "progress.csv"
        kept: list[dict[str, str]] = []
        if resume_after is not None and self.path.exists():
            with self.path.open(newline="") as f:
                kept = [r for r in csv.DictReader(f) if int(r["update"]) <= resume_after]
        self.file = self.path.open("w", newline="")
        # extrasaction: a run record from before a column was dropped still resumes
        self.writer = csv.DictWriter(self.file, COLUMNS, extrasaction="ignore")
        self.writer.writeheader()
        self.writer.writerows(kept)
        self.file.flush()
        self.tb = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter

                self.tb = SummaryWriter(str(out / "tb"))
            except ImportError:  # tensorboard comes with the train extra; say when it is off
                print(
                    "TensorBoard logging is off: the tensorboard package is not installed "
                    "(pip install rummy_env[train]); progress.csv is written as usual",
                    file=sys.stderr,
                )

    def write(self, row: dict[str, Any], step: int) -> None:
        """One row to ``progress.csv`` and, when installed, to TensorBoard."""
        self.writer.writerow(row)
        self.file.flush()
        if self.tb is not None:
            for k, v in row.items():
                if isinstance(v, (int, float, np.floating)) and k != "global_step":
                    self.tb.add_scalar(k, v, step)

    def close(self) -> None:
        self.file.close()


def evaluate(
    net: MaskedActorCritic,
    cfg: Config,
    opponent: str,
    games: int,
    seed: int,
) -> dict[str, float]:
    """Greedy policy against ``opponent`` for ``games`` games (learner in seat ``i % P``), one
    episode each; wins, draws and mean learner return."""
    # the game's own reward decides wins: a normalized reward may be clipped (500 Rum)
    options = {k: v for k, v in cfg.options.items() if k != "reward"}
    venv = rummy_env.make_vec(cfg.game, games, seed=seed, **options)
    obs, info = venv.reset()
    opp = batched(make_agent(opponent, seed=seed, game=cfg.game))
    seat = np.arange(games) % venv.num_players
    ret = np.zeros((games, venv.num_players))
    finished = np.zeros(games, dtype=bool)
    while not finished.all():
        cur = info["current_player"]
        mask = obs["action_mask"] == 1
        x = add_features(cfg.features, obs["observation"], cfg.game, cfg.options)
        actions = policy_actions(
            net, x, mask, greedy=True, legal=cfg.legal_logits, sparse=cfg.sparse_inputs
        )
        opp_rows = np.flatnonzero((cur != seat) & ~finished)
        if opp_rows.size:
            o, m = obs["observation"][opp_rows], obs["action_mask"][opp_rows]
            actions[opp_rows] = opp(o, m, venv.game, opp_rows)
        obs, rewards, term, trunc, info = venv.step(actions.astype(np.int64))
        ret += np.where(finished[:, None], 0.0, rewards)
        finished |= term | trunc
    # a win: the learner's return beats every other seat's (500 Rum pays each player its own
    # points, so a positive return is not a win); a draw: a tie for the best return
    mine = ret[np.arange(games), seat]
    others = np.where(np.arange(venv.num_players)[None] == seat[:, None], -np.inf, ret).max(1)
    wins, draws = int((mine > others).sum()), int((mine == others).sum())
    lo, hi = wilson_interval(wins, games)
    decisive = games - draws
    return {
        "eval_games": games,
        "eval_win_rate": wins / games,
        "eval_win_lo": lo,
        "eval_win_hi": hi,
        "eval_draw_rate": draws / games,
        "eval_decisive_win_rate": wins / decisive if decisive else math.nan,
        "eval_mean_return": float(mine.mean()),
        "eval_mean_margin": float((mine - others).mean()),
    }


def plot_curve(csv_path: Path, png_path: Path, title: str) -> None:
    """Eval win rate (95% Wilson band) against environment steps; skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    rows = [r for r in csv.DictReader(csv_path.open()) if r.get("eval_win_rate")]
    if not rows:
        return
    x = np.array([float(r["global_step"]) for r in rows])
    y, lo, hi = (
        np.array([float(r[k]) for r in rows])
        for k in ("eval_win_rate", "eval_win_lo", "eval_win_hi")
    )
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    ax.fill_between(x, lo, hi, alpha=0.3, label="95% Wilson interval")
    ax.plot(x, y, marker="o", ms=3, label="win rate")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("episodes won")  # hands, unless the run set --option episode=...
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
