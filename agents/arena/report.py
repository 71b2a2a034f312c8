"""Arena output: markdown tables, CSV and JSON files, and a heatmap of pairwise win rates."""

from __future__ import annotations

import csv
import json
import math
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from rummy_agents.arena.runner import ArenaResult

GAME_FIELDS = (
    "pair",
    "deal",
    "leg",
    "agent_a",
    "agent_b",
    "players",
    "a_seat",
    "a_seats",
    "dealer",
    "deal_id",
    "return_a",
    "return_b",
    "margin",
    "result",
    "outcome",
    "hands",
    "decisions",
    "truncated",
)


def _pct(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{100 * x:.1f}"


def _num(x: float, nd: int = 2) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:.{nd}f}"


def pairs_markdown(result: ArenaResult) -> str:
    """Markdown table of the pairs (one row per pair, A's point of view)."""
    head = (
        "| A | B | games | A wins | B wins | draws | trunc. | A win % [95% Wilson] | "
        "A score % | A margin/game [95% CI, duplicate] | ± if independent |"
    )
    rule = "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    rows = [head, rule]
    for p in result.pairs:
        rows.append(
            f"| {p.agent_a} | {p.agent_b} | {p.games} | {p.wins_a} | {p.wins_b} | {p.draws} | "
            f"{p.truncated} | {_pct(p.win_rate)} [{_pct(p.win_lo)}, {_pct(p.win_hi)}] | "
            f"{_pct(p.score_rate)} | {_num(p.margin)} [{_num(p.margin_lo)}, {_num(p.margin_hi)}]"
            f" | ±{_num(p.margin_half_indep)} |"
        )
    return "\n".join(rows)


def ratings_markdown(result: ArenaResult) -> str:
    """Markdown table of the Bradley-Terry ratings, best first."""
    rows = [
        "| agent | BT rating (Elo scale) | 95% bootstrap CI | games | score % |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in sorted(result.ratings, key=lambda r: -r.rating):
        ci = f"[{r.lo:.0f}, {r.hi:.0f}]" if math.isfinite(r.lo) else "n/a"
        rows.append(f"| {r.agent} | {r.rating:.0f} | {ci} | {r.games} | {_pct(r.score)} |")
    return "\n".join(rows)


def _draws_and_margin(game: str, players: int) -> tuple[str, str]:
    """What a draw is and how the margin reads, for ``game`` with ``players`` players."""
    if game == "rummy51":  # penalties, lower is better: wins are hands gone out / matches won
        draws = "draws (drawn hands: the stock ran out, no winner)"
        if players > 2:
            return draws, "margin = B's mean penalty - A's mean penalty per game (lower is better)"
        return draws, (
            "margin = B's penalty - A's penalty per game (Rummy 51 penalties: lower is better)"
        )
    if players > 2:
        return (
            "draws (equal top points, e.g. Gin dead hands)",
            "margin = (A's mean points - B's mean points) / 2 per game",
        )
    return "draws (equal points, e.g. Gin dead hands)", (
        "margin = (A's points - B's points) / 2 per game (A's points in zero-sum Gin; "
        "twice the margin is the score difference in 500 Rum)"
    )


def notes(result: ArenaResult) -> list[str]:
    """Definitions printed under the tables."""
    s = result.spec
    opts = " ".join(f"{k}={v}" for k, v in s.options.items()) or "defaults"
    anchor = "random = 0" if "random" in s.agents else "mean 0"
    dup = "same cards"
    if s.options.get("episode") in ("match", "game"):  # Gin matches, 500 Rum games
        dup = "same deck order for hand h of both games; later dealers follow the rules"
        if s.game == "rummy51":  # a stock reshuffle draws on the deal's random stream
            dup = (
                "same deck order for hand h of both games until a stock reshuffle in either; "
                "later dealers follow the rules"
            )
    players = max((int(r.get("players", 2)) for r in result.records), default=2)
    seats = "seats exchanged"
    if players > 2:
        seats = f"{players} players, seats alternating A, B, A, ... then B, A, B, ..."
    if players == 4 and s.game == "gin_rummy":
        seats = "4 players: teams (A, A) against (B, B), then the teams exchange seats"
    if players > 2 and s.game == "gin_rummy":
        seats += "; every agent plays the 2-player hands its seat sits in"
    draws, margin = _draws_and_margin(s.game, players)
    out = [
        f"game {s.game} ({opts}); {s.deals} duplicate deals per pair (2 games each, {seats}, "
        f"{dup}); seed {s.seed}",
        f"win % = A wins / (A wins + B wins); {draws} and truncated games excluded; "
        "score % counts draws as half; Wilson intervals treat the games as independent",
        f"{margin}; CI: t interval over deals of the "
        "pair-averaged margin; '± if independent': half-width treating games as independent",
        f"ratings: Bradley-Terry (MM) on all games, draws half a win, Elo scale, {anchor}; "
        f"CI: {s.bootstrap} bootstrap resamples of deals",
        f"{len(result.records)} games in {result.seconds:.1f} s with {s.workers} worker(s) "
        f"({len(result.records) / max(result.seconds, 1e-9):.0f} games/s)",
    ]
    perfect = [f"{p.agent_a}-{p.agent_b}" for p in result.pairs if min(p.wins_a, p.wins_b) == 0]
    if perfect:
        out.append(
            "pairs with a perfect score (" + ", ".join(perfect) + "): the data put no upper "
            "limit on their rating gap; it is finite only through the prior (one virtual draw "
            "per pair)"
        )
    return out


def markdown(result: ArenaResult) -> str:
    """Both tables and the notes, as one markdown document body."""
    parts = [pairs_markdown(result), "", ratings_markdown(result), ""]
    parts += [f"- {n}" for n in notes(result)]
    return "\n".join(parts)


def win_matrix(result: ArenaResult) -> np.ndarray:
    """(K, K) win rate of the row agent against the column agent (NaN on the diagonal)."""
    names = list(result.spec.agents)
    k = len(names)
    m = np.full((k, k), np.nan)
    for p in result.pairs:
        i, j = names.index(p.agent_a), names.index(p.agent_b)
        m[i, j] = p.win_rate
        m[j, i] = 1.0 - p.win_rate if math.isfinite(p.win_rate) else np.nan
    return m


def heatmap(result: ArenaResult, path: str | Path) -> Path:
    """Write a PNG heatmap of pairwise win rates (row agent vs column agent)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result.spec.agents)
    m = win_matrix(result)
    k = len(names)
    fig, ax = plt.subplots(figsize=(1.6 + 1.1 * k, 1.2 + 1.0 * k))
    im = ax.imshow(np.ma.masked_invalid(m), vmin=0.0, vmax=1.0, cmap="RdYlGn")
    ax.set_xticks(range(k), names, rotation=30, ha="right")
    ax.set_yticks(range(k), names)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    for i in range(k):
        for j in range(k):
            if np.isfinite(m[i, j]):
                ax.text(j, i, f"{100 * m[i, j]:.1f}%", ha="center", va="center", fontsize=9)
    s = result.spec
    ax.set_title(f"{s.game}: win rate (decisive games)\n{s.deals} duplicate deals per pair")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def write_outputs(result: ArenaResult, out_dir: str | Path, png: bool = True) -> list[Path]:
    """Write ``games.csv``, ``pairs.csv``, ``ratings.csv``, ``summary.json``, ``table.md`` and
    ``heatmap.png`` into ``out_dir`` (created). Returns the paths written. Without matplotlib
    (the ``plot`` extra) the heatmap is skipped with a warning.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    p = out / "games.csv"
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=GAME_FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(result.records)
    paths.append(p)
    p = out / "pairs.csv"
    rows = [asdict(x) for x in result.pairs]
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            r["outcomes"] = json.dumps(r["outcomes"])
            w.writerow(r)
    paths.append(p)
    p = out / "ratings.csv"
    rows = [asdict(x) for x in result.ratings]
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    paths.append(p)
    p = out / "summary.json"
    p.write_text(json.dumps(_clean(result.to_dict()), indent=2) + "\n")
    paths.append(p)
    p = out / "table.md"
    p.write_text(markdown(result) + "\n")
    paths.append(p)
    if png:
        try:
            paths.append(heatmap(result, out / "heatmap.png"))
        except ImportError:
            # the picture is optional: a plain install has no matplotlib (the plot extra)
            warnings.warn(
                "heatmap.png skipped: matplotlib is not installed (pip install 'rummy_env[plot]'; "
                "in a checkout: pip install -c constraints.txt -e '.[plot]')",
                stacklevel=2,
            )
    return paths


__all__ = [
    "heatmap",
    "markdown",
    "notes",
    "pairs_markdown",
    "ratings_markdown",
    "win_matrix",
    "write_outputs",
]
