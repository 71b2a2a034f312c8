"""Several runs' learning curves on one figure: the evaluation win rate (with its 95% Wilson
band) of each ``progress.csv`` of ``experiments/ppo_selfplay.py`` against environment steps.

    python experiments/plot_curves.py --out curves.png --title "Gin Rummy from scratch" \
        "defaults=runs/scratch_gin/progress.csv" \
        "card head only=runs/scratch_gin_D/progress.csv+runs/scratch_gin_E/progress.csv"

Each run is ``LABEL=CSV``; ``CSV+CSV`` joins a run and its ``--resume`` continuation (a resumed
run writes its rows to its own directory).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np


def read_curve(spec: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(steps, win rate, low, high) of the evaluation rows of the ``+``-joined CSV files."""
    rows = []
    for part in spec.split("+"):
        path = Path(part)
        if not path.is_file():
            raise ValueError(f"no such progress file: {part!r}")
        rows += [r for r in csv.DictReader(path.open()) if r.get("eval_win_rate")]
    if not rows:
        raise ValueError(f"{spec!r} has no evaluation rows (eval_win_rate)")
    cols = ("global_step", "eval_win_rate", "eval_win_lo", "eval_win_hi")
    steps, win, lo, hi = (np.array([float(r[k]) for r in rows]) for k in cols)
    return steps, win, lo, hi


def main(argv: list[str] | None = None) -> None:
    """Plot the runs of the command line ``argv`` (``sys.argv`` when None)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="LABEL=CSV[+CSV...]")
    ap.add_argument("--out", required=True, help="PNG file to write")
    ap.add_argument("--title", default="")
    ap.add_argument("--ylabel", default="episodes won against the evaluation opponent")
    args = ap.parse_args(argv)
    curves = []
    for run in args.runs:
        label, sep, spec = run.partition("=")
        if not sep or not label or not spec:
            ap.error(f"a run is LABEL=CSV[+CSV...], got {run!r}")
        curves.append((label, read_curve(spec)))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    for label, (x, y, lo, hi) in curves:
        (line,) = ax.plot(x / 1e6, y, marker="o", ms=3, label=label)
        ax.fill_between(x / 1e6, lo, hi, alpha=0.2, color=line.get_color())
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("environment steps (millions)")
    ax.set_ylabel(args.ylabel)
    ax.set_ylim(0, 1)
    ax.set_title(args.title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out)
    plt.close(fig)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
