"""Round-robin arena with duplicate deals and honest statistics (``rummy-env arena``).

Example:
    >>> from agents.arena import ArenaSpec, run_arena, markdown
    >>> result = run_arena(ArenaSpec("gin_rummy", ("random", "simple"), deals=10), progress=False)
    >>> print(markdown(result))  # doctest: +SKIP

Modules: :mod:`~agents.arena.registry` (agents by name), :mod:`~agents.arena.play` (duplicate
deals), :mod:`~agents.arena.runner` (round robin over processes, per-pair statistics, ratings),
:mod:`~agents.arena.stats` (Wilson, t intervals, Bradley-Terry), :mod:`~agents.arena.report`
(tables, CSV/JSON, heatmap).
"""

from agents.arena.registry import AGENTS, make_agent, register_agent
from agents.arena.report import markdown, write_outputs
from agents.arena.runner import (
    ArenaResult,
    ArenaSpec,
    PairStats,
    Rating,
    deal_seed,
    run_arena,
)
from agents.arena.stats import bradley_terry, bt_ratings, mean_interval, wilson_interval

__all__ = [
    "AGENTS",
    "ArenaResult",
    "ArenaSpec",
    "PairStats",
    "Rating",
    "bradley_terry",
    "bt_ratings",
    "deal_seed",
    "make_agent",
    "markdown",
    "mean_interval",
    "register_agent",
    "run_arena",
    "wilson_interval",
    "write_outputs",
]
