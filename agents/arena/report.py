"""Arena output: markdown tables, CSV and JSON files, and a heatmap of pairwise win rates."""

from __future__ import annotations

import csv
import json
import math
import warnings
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from rummy_agents.arena.runner import ArenaResult, ArenaSpec, PairStats, Rating

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


_EXACT = 1e-9
"""Relative width under which an interval counts as a point (float noise of a zero spread)."""


def _pct(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"{100 * x:.1f}"


def _num(x: float, nd: int = 2) -> str:
    return "n/a" if not math.isfinite(x) else f"{x:.{nd}f}"


def _is_point(lo: float, hi: float) -> bool:
    """True when a finite interval has no width (beyond float noise)."""
    return hi - lo <= _EXACT * max(1.0, abs(lo), abs(hi))


def mirror_pair(p: PairStats) -> PairStats:
    """The same pair from B's point of view (B becomes A): wins, rates, intervals and margins
    exchanged or negated. Every number is the exact mirror (a Wilson interval of ``1 - p`` is
    ``1 -`` the interval of ``p``), so nothing is recomputed.
    """
    return replace(
        p,
        agent_a=p.agent_b,
        agent_b=p.agent_a,
        wins_a=p.wins_b,
        wins_b=p.wins_a,
        win_rate=1.0 - p.win_rate,
        win_lo=1.0 - p.win_hi,
        win_hi=1.0 - p.win_lo,
        score_rate=1.0 - p.score_rate,
        margin=-p.margin,
        margin_lo=-p.margin_hi,
        margin_hi=-p.margin_lo,
    )


def stronger_first(p: PairStats) -> PairStats:
    """``p`` seen from the side of the agent that scored more in the pair: A is the agent with the
    higher score % (draws half); on a tie (or no complete game) the higher margin; on a tie again
    the order given.
    """
    if math.isfinite(p.score_rate) and p.score_rate != 0.5:
        flip = p.score_rate < 0.5
    else:
        flip = math.isfinite(p.margin) and p.margin < 0.0
    return mirror_pair(p) if flip else p


def display_pairs(result: ArenaResult) -> list[PairStats]:
    """The pairs as the tables show them: each from its stronger agent's side
    (:func:`stronger_first`), sorted by A's rating, then B's (best first), then the round-robin
    order. ``result.pairs`` (and ``pairs.csv``, ``summary.json``) keep the order given.
    """
    rating = {r.agent: r.rating for r in result.ratings}
    shown = [stronger_first(p) for p in result.pairs]
    order = sorted(
        range(len(shown)),
        key=lambda n: (-rating.get(shown[n].agent_a, 0.0), -rating.get(shown[n].agent_b, 0.0), n),
    )
    return [shown[n] for n in order]


def _win_cell(p: PairStats) -> str:
    """A's win % with its Wilson interval; an end the data pin (no win, no loss) is exact."""
    if p.wins_a + p.wins_b == 0:
        return "n/a (no decisive game)"
    lo = "0" if p.wins_a == 0 else _pct(p.win_lo)
    hi = "100" if p.wins_b == 0 else _pct(p.win_hi)
    return f"{_pct(p.win_rate)} [{lo}, {hi}]"


def _margin_cell(p: PairStats) -> str:
    """A's mean margin with its duplicate t interval, or why there is none."""
    if not math.isfinite(p.margin):
        return "n/a (no complete deal)"
    m = _num(p.margin)
    if not (math.isfinite(p.margin_lo) and math.isfinite(p.margin_hi)):
        return f"{m} [n/a: 1 deal]"  # a t interval needs two deals (saved as null)
    if _is_point(p.margin_lo, p.margin_hi):
        return f"{m} [n/a: no spread]"
    return f"{m} [{_num(p.margin_lo)}, {_num(p.margin_hi)}]"


def _indep_cell(p: PairStats) -> str:
    """Half-width of the margin's t interval if the games were independent, or ``n/a`` (at most
    one complete game, or every game the same margin).
    """
    h = p.margin_half_indep
    if not math.isfinite(h) or _is_point(0.0, h):
        return "n/a"
    return f"±{_num(h)}"


def pairs_markdown(result: ArenaResult) -> str:
    """Markdown table of the pairs, one row per pair from its stronger agent's side
    (:func:`display_pairs`).
    """
    head = (
        "| A | B | games | A wins | B wins | draws | trunc. | A win % [95% Wilson] | "
        "A score % | A margin/game [95% CI, duplicate] | ± if independent |"
    )
    rule = "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    rows = [head, rule]
    for p in display_pairs(result):
        rows.append(
            f"| {p.agent_a} | {p.agent_b} | {p.games} | {p.wins_a} | {p.wins_b} | {p.draws} | "
            f"{p.truncated} | {_win_cell(p)} | {_pct(p.score_rate)} | {_margin_cell(p)} | "
            f"{_indep_cell(p)} |"
        )
    return "\n".join(rows)


def _anchor(result: ArenaResult) -> str | None:
    return "random" if "random" in result.spec.agents else None


def rating_limits(result: ArenaResult) -> dict[str, tuple[bool, bool]]:
    """Whether the data bound each agent's rating ``(below, above)``.

    Bradley-Terry's likelihood keeps growing as a group of agents moves away from the rest when
    no game links them back: a rating has an upper limit only if a chain of games won or drawn
    (agent -> opponent) leads from the reference (``random``, or with mean-0 ratings every other
    agent) to the agent, and a lower limit only if one leads from the agent to the reference.
    Without one the rating is finite only through the prior (one virtual draw per pair), and a
    bootstrap of the deals only repeats the prior (a point such as ``[1320, 1320]``).

    Returns:
        ``{agent: (bounded_below, bounded_above)}``.
    """
    names = list(result.spec.agents)
    k = len(names)
    reach = np.eye(k, dtype=bool)  # reach[i, j]: a chain of games won or drawn from i to j
    for p in result.pairs:
        i, j = names.index(p.agent_a), names.index(p.agent_b)
        reach[i, j] |= p.wins_a + p.draws > 0
        reach[j, i] |= p.wins_b + p.draws > 0
    for m in range(k):  # transitive closure (Warshall)
        reach |= reach[:, m : m + 1] & reach[m : m + 1, :]
    games = {r.agent: r.games for r in result.ratings}
    anchor = _anchor(result)
    refs = [names.index(anchor)] if anchor else [n for n in range(k) if games.get(names[n], 0)]
    return {
        a: (bool(reach[x, refs].all()), bool(reach[refs, x].all())) for x, a in enumerate(names)
    }


def _rating_ci_cell(r: Rating, limits: tuple[bool, bool], anchor: str | None) -> str:
    """The bootstrap interval of a rating, or why it is not shown."""
    if r.agent == anchor:
        return "anchor"
    if r.games == 0:
        return "n/a (no complete game)"
    below, above = limits
    if not (below or above):
        return "n/a (no limit either way)"
    if not above:
        return "n/a (no upper limit)"
    if not below:
        return "n/a (no lower limit)"
    if not (math.isfinite(r.lo) and math.isfinite(r.hi)):
        return "n/a (no bootstrap)"
    if _is_point(r.lo, r.hi):
        return "n/a (no spread)"
    return f"[{r.lo:.0f}, {r.hi:.0f}]"


def ratings_markdown(result: ArenaResult) -> str:
    """Markdown table of the Bradley-Terry ratings, best first (ties: the order given)."""
    rows = [
        "| agent | BT rating (Elo scale) | 95% bootstrap CI | games | score % |",
        "|---|---:|---:|---:|---:|",
    ]
    limits = rating_limits(result)
    anchor = _anchor(result)
    for r in sorted(result.ratings, key=lambda r: -r.rating):
        ci = _rating_ci_cell(r, limits[r.agent], anchor)
        rows.append(f"| {r.agent} | {r.rating:.0f} | {ci} | {r.games} | {_pct(r.score)} |")
    return "\n".join(rows)


def _draws_and_margin(game: str, players: int, episode: str = "hand") -> tuple[str, str]:
    """What a draw is and how the margin reads, for ``game`` with ``players`` players and
    ``episode`` (``"hand"``, or ``"match"``/``"game"``: a Gin or Rummy 51 match, a 500 Rum game).
    A game's result is the seat with the best return (Rummy 51: the seat that went out, or the
    match winner); a draw is a game no seat of one agent won alone
    (:func:`rummy_agents.arena.play.game_result`).
    """
    whole = episode in ("match", "game")
    if game == "rummy51":  # penalties, lower is better: wins are hands gone out / matches won
        if whole:
            draws = "draws (none possible: a match ends with one player left, its winner)"
        else:
            draws = (
                "draws (drawn hands: the stock ran out after its reshuffles and no one went out)"
            )
        if players > 2:
            return draws, "margin = B's mean penalty - A's mean penalty per game (lower is better)"
        return draws, (
            "margin = B's penalty - A's penalty per game (Rummy 51 penalties: lower is better)"
        )
    if game == "five_hundred_rum":
        if players > 2:
            draws = "draws (an A seat and a B seat tie for the best score)"
        elif whole:
            draws = "draws (equal final totals; the rules play on to a single winner, so none)"
        else:
            draws = "draws (both scored the same points in the hand: melded minus held)"
        if players > 2:
            return draws, "margin = (A's mean points - B's mean points) / 2 per game"
        return draws, (
            "margin = (A's points - B's points) / 2 per game: half the score difference "
            "(500 Rum is not zero-sum)"
        )
    # Gin Rummy
    if players > 2:
        return (
            "draws (an A seat and a B seat tie for the best points, e.g. dead hands)",
            "margin = (A's mean points - B's mean points) / 2 per game",
        )
    if whole:
        draws = "draws (equal match points; a match to its target always has a winner, so none)"
    else:
        draws = "draws (dead hands: the stock ran down to 2 cards without a knock, no score)"
    return draws, "margin = (A's points - B's points) / 2 per game = A's points (Gin is zero-sum)"


def _players(result: ArenaResult) -> int:
    """Players per game: from the records, else (a saved run) the rule options (default 2)."""
    if result.records:
        return max(int(r.get("players", 2)) for r in result.records)
    return int(result.spec.options.get("num_players", 2))


def notes(result: ArenaResult) -> list[str]:
    """Definitions printed under the tables, and a footnote for every interval not shown."""
    s = result.spec
    opts = " ".join(f"{k}={v}" for k, v in s.options.items()) or "defaults"
    anchor = _anchor(result)
    dup = "same cards"
    episode = str(s.options.get("episode", "hand"))
    if episode in ("match", "game"):  # Gin and Rummy 51 matches, 500 Rum games
        dup = "same deck order for hand h of both games; later dealers follow the rules"
        if s.game == "rummy51":  # a stock reshuffle draws on the deal's random stream
            dup = (
                "same deck order for hand h of both games until a stock reshuffle in either; "
                "later dealers follow the rules"
            )
    players = _players(result)
    seats = "seats exchanged"
    if players > 2:
        seats = f"{players} players, seats alternating A, B, A, ... then B, A, B, ..."
    if players == 4 and s.game == "gin_rummy":
        seats = "4 players: teams (A, A) against (B, B), then the teams exchange seats"
    if players > 2 and s.game == "gin_rummy":
        seats += "; every agent plays the 2-player hands its seat sits in"
    draws, margin = _draws_and_margin(s.game, players, episode)
    games = sum(p.games for p in result.pairs)
    boot = (
        f"CI: {s.bootstrap} bootstrap resamples of deals"
        if s.bootstrap > 0
        else "no bootstrap (--bootstrap 0)"
    )
    out = [
        f"game {s.game} ({opts}); {s.deals} duplicate deals per pair (2 games each, {seats}, "
        f"{dup}); seed {s.seed}",
        "each row reads from the side of the agent that scored more in the pair (A: the higher "
        "score %, then the higher margin, then the order given), rows by A's rating, then B's; "
        "pairs.csv and summary.json keep the order given",
        f"win % = A wins / (A wins + B wins); {draws} and truncated games excluded; "
        "score % counts draws as half; Wilson intervals treat the games as independent "
        "(an end written 0 or 100 is exact: no win, or no loss)",
        f"{margin}; CI: t interval over deals of the "
        "pair-averaged margin; '± if independent': half-width treating games as independent",
        "ratings: Bradley-Terry (MM) on all games, draws half a win, Elo scale, "
        + (f"{anchor} = 0 (the anchor: no interval)" if anchor else "mean 0")
        + f"; {boot}",
        f"{games} games in {result.seconds:.1f} s with {s.workers} worker(s) "
        f"({games / max(result.seconds, 1e-9):.0f} games/s)",
    ]
    shown = display_pairs(result)
    perfect = [f"{p.agent_a}-{p.agent_b}" for p in shown if p.wins_b == 0 and p.wins_a > 0]
    if perfect:
        out.append(
            "pairs with a perfect score (" + ", ".join(perfect) + "): their win % interval is "
            "one-sided, and no game limits their rating gap (see the ratings)"
        )
    if any(p.wins_a + p.wins_b == 0 for p in shown):
        out.append("'no decisive game': every game was drawn or truncated, so no win %")
    margins = [_margin_cell(p) for p in shown]
    if any("1 deal" in c or "no complete deal" in c for c in margins):
        out.append(
            "margin '1 deal', 'no complete deal': a t interval needs two deals without a "
            "truncated game ('± if independent': two games)"
        )
    flat = any(math.isfinite(p.margin_half_indep) and _indep_cell(p) == "n/a" for p in shown)
    if flat or any("no spread" in c for c in margins):
        out.append(
            "margin 'no spread' (and '± if independent' n/a with 2+ games): every deal (game) "
            "gave the same margin, so a t interval has zero width, which is no evidence of a zero "
            "error"
        )
    limits = rating_limits(result)
    ci = [_rating_ci_cell(r, limits[r.agent], anchor) for r in result.ratings]
    if any("limit" in c for c in ci):
        ref = anchor or "the other agents"
        out.append(
            f"rating 'no upper limit' ('no lower limit'): no chain of games won or drawn leads "
            f"from {ref} to the agent (from the agent to {ref}), so the data put no upper (lower) "
            "limit on its rating: the value shown is finite only through the prior (one virtual "
            "draw per pair), and a bootstrap of the deals would only repeat it"
        )
    if any(c == "n/a (no spread)" for c in ci):
        out.append(
            "rating 'no spread': every bootstrap resample gave the same rating (one deal, or "
            "every deal scored alike): not an interval"
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


def _nan(x: Any) -> Any:
    """``None`` (how ``summary.json`` saves NaN and infinities) back to NaN."""
    return math.nan if x is None else x


def load_result(folder: str | Path) -> ArenaResult:
    """The :class:`ArenaResult` saved in ``folder/summary.json`` by :func:`write_outputs`, without
    the per-game records (enough for :func:`markdown` and :func:`heatmap`).

    The spec is read as saved, without checking its agents again: a saved run may name a
    checkpoint that is not on this machine, and no agent is made to report on it.

    Raises:
        FileNotFoundError: if ``folder`` has no ``summary.json``.
        ValueError: if it is not an arena summary.
    """
    path = Path(folder) / "summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    keys = {"spec", "pairs", "ratings", "seconds"}
    if not isinstance(data, dict) or not keys <= set(data):
        raise ValueError(f"{str(path)!r} is not an arena summary: it needs the keys {sorted(keys)}")
    spec = object.__new__(ArenaSpec)  # frozen, and its checks would make the agents
    for f in fields(ArenaSpec):
        default = f.default_factory() if callable(f.default_factory) else f.default
        value = data["spec"].get(f.name, default)
        object.__setattr__(spec, f.name, tuple(value) if f.name == "agents" else value)
    pairs = [PairStats(**{k: _nan(v) for k, v in p.items()}) for p in data["pairs"]]
    ratings = [Rating(**{k: _nan(v) for k, v in r.items()}) for r in data["ratings"]]
    return ArenaResult(spec, [], pairs, ratings, float(data["seconds"]))


def rebuild_table(folder: str | Path) -> Path:
    """Rewrite ``folder/table.md`` from ``folder/summary.json`` (the same text
    :func:`write_outputs` writes for that result). Returns the path written.
    """
    path = Path(folder) / "table.md"
    path.write_text(markdown(load_result(folder)) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m rummy_agents.arena.report FOLDER...``: rewrite each arena folder's
    ``table.md`` from its ``summary.json`` (after a change to the report's format).
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m rummy_agents.arena.report",
        description="Rewrite each arena output folder's table.md from its summary.json.",
    )
    parser.add_argument("folders", nargs="+", help="arena output folders (--out of the run)")
    args = parser.parse_args(argv)
    for folder in args.folders:
        try:
            print(rebuild_table(folder))
        except (OSError, ValueError, TypeError) as e:
            parser.exit(2, f"{parser.prog}: {folder}: {e}\n")
    return 0


__all__ = [
    "display_pairs",
    "heatmap",
    "load_result",
    "markdown",
    "mirror_pair",
    "notes",
    "pairs_markdown",
    "rating_limits",
    "ratings_markdown",
    "rebuild_table",
    "stronger_first",
    "win_matrix",
    "write_outputs",
]


if __name__ == "__main__":
    raise SystemExit(main())
