"""Gin Rummy matches predicted from single hands, and paired gains between two arena runs.

An arena run of single Gin hands (``rummy-env arena --game gin_rummy --episode hand ...
--out DIR`` writes ``DIR/games.csv``) gives agent A's hand results against B. If the hands of
a match to ``--target`` were independent draws of those results (the winner of a hand adds
its points to its match score; dead hands change nothing), A would win the share of matches
printed here. The model ignores what a match adds (the score seen by the players, who deals),
and it matched the arena within 2 points (e.g. `ppo` against `simple`: 60.2% predicted from
1,600 hands, 60.6% of 4,000 matches measured). It also answers "what would it take":
``--shares`` reweights A's hand wins and losses (each side keeping its own point
distribution) to the given shares of hands won.

With ``--base OTHER/games.csv`` (a run of another agent A' against the same B on the same
deals: same ``--seed`` and ``--deals``) it prints A's gain in points a hand over A', paired by
deal (both seatings), with a 95% t interval.

    python experiments/hands_to_matches.py runs/search/games.csv --base runs/ppo/games.csv
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

import numpy as np

GIN_OUTCOMES = {"knock", "gin", "undercut", "dead_hand"}


def read_hands(path: str | Path) -> dict[tuple[str, str], float]:
    """A's points in each hand of a Gin ``games.csv``, keyed by (deal id, leg).

    Raises:
        ValueError: for a missing file, or rows that are not single Gin hands.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no such games file: {str(path)!r}")
    out: dict[tuple[str, str], float] = {}
    for row in csv.DictReader(path.open()):
        if row.get("outcome") not in GIN_OUTCOMES or row.get("hands") != "1":
            raise ValueError(
                f"{str(path)!r}: expected single Gin Rummy hands (--episode hand), got a row "
                f"with outcome={row.get('outcome')!r}, hands={row.get('hands')!r}"
            )
        out[(row["deal_id"], row["leg"])] = float(row["margin"])
    if not out:
        raise ValueError(f"{str(path)!r} has no games")
    return out


def match_win_rate(
    points: np.ndarray, target: int = 100, matches: int = 20000, seed: int = 0
) -> float:
    """Share of matches to ``target`` won by A when every hand is an independent draw of
    ``points`` (A's signed hand results; 0 for a dead hand).
    """
    points = np.asarray(points, dtype=np.float64)
    points = points[points != 0]
    if points.size == 0:
        raise ValueError("no decided hand: every hand was dead")
    rng = np.random.default_rng(seed)
    a = np.zeros(matches)
    b = np.zeros(matches)
    done = np.zeros(matches, dtype=bool)
    won = np.zeros(matches, dtype=bool)
    while not done.all():
        x = rng.choice(points, matches)
        a += np.where(~done & (x > 0), x, 0.0)
        b += np.where(~done & (x < 0), -x, 0.0)
        new = ~done & ((a >= target) | (b >= target))
        won[new] = a[new] >= target
        done |= new
    return float(won.mean())


def reweighted(points: np.ndarray, share: float, size: int, seed: int = 0) -> np.ndarray:
    """``size`` hand results where A wins a ``share`` of the decided hands, the points of a
    won (lost) hand drawn from A's won (lost) hands in ``points``.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], got {share!r}")
    won, lost = points[points > 0], points[points < 0]
    if won.size == 0 or lost.size == 0:
        raise ValueError("need both won and lost hands to reweight")
    rng = np.random.default_rng(seed)
    return np.where(rng.random(size) < share, rng.choice(won, size), rng.choice(lost, size))


def paired_gain(
    run: dict[tuple[str, str], float], base: dict[tuple[str, str], float]
) -> tuple[float, float, float, int]:
    """(mean gain a hand, 95% low, 95% high, deals): ``run``'s points minus ``base``'s on the
    same (deal, leg), averaged over each deal's legs, t interval over deals.

    Raises:
        ValueError: if the runs share fewer than 2 deals.
    """
    deals: dict[str, list[float]] = {}
    for key in sorted(set(run) & set(base)):
        deals.setdefault(key[0], []).append(run[key] - base[key])
    if len(deals) < 2:
        raise ValueError(f"the runs share {len(deals)} deal(s); pair runs of the same --seed")
    d = np.array([np.mean(v) for v in deals.values()])
    half = 1.96 * float(d.std(ddof=1)) / math.sqrt(d.size)
    return float(d.mean()), float(d.mean()) - half, float(d.mean()) + half, int(d.size)


def main(argv: list[str] | None = None) -> None:
    """Print the predictions (and the paired gain) for the command line ``argv``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", help="games.csv of a Gin arena run of single hands")
    ap.add_argument("--base", help="games.csv of another agent on the same deals (paired gain)")
    ap.add_argument("--target", type=int, default=100, help="match target (default 100)")
    ap.add_argument("--matches", type=int, default=20000, help="simulated matches")
    ap.add_argument("--shares", type=float, nargs="*", default=[], help="hand-win shares")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.target < 1 or args.matches < 1:
        raise ValueError(
            f"--target and --matches must be >= 1, got {args.target} and {args.matches}"
        )
    run = read_hands(args.games)
    pts = np.array(list(run.values()))
    decided = pts[pts != 0]
    print(
        f"{args.games}: {pts.size} hands, A won {np.mean(decided > 0):.1%} of the decided, "
        f"{pts.mean():+.2f} points a hand; matches to {args.target} won (independent hands): "
        f"{match_win_rate(pts, args.target, args.matches, args.seed):.1%}"
    )
    for share in args.shares:
        sim = reweighted(decided, share, 20 * args.matches, args.seed)
        rate = match_win_rate(sim, args.target, args.matches, args.seed)
        print(f"  hands won {share:.1%}: {sim.mean():+.2f} points a hand, matches won {rate:.1%}")
    if args.base:
        m, lo, hi, n = paired_gain(run, read_hands(args.base))
        print(f"gain over {args.base}: {m:+.2f} points a hand [{lo:+.2f}, {hi:+.2f}], {n} deals")


if __name__ == "__main__":
    main()
