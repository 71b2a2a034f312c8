"""Round-robin arena with duplicate deals and honest statistics (``rummy-env arena``).

Example:
    >>> from rummy_agents.arena import ArenaSpec, run_arena, markdown
    >>> result = run_arena(ArenaSpec("gin_rummy", ("random", "simple"), deals=10), progress=False)
    >>> print(markdown(result))  # doctest: +SKIP

Modules: :mod:`~rummy_agents.arena.registry` (agents by name), :mod:`~rummy_agents.arena.play`
(duplicate deals), :mod:`~rummy_agents.arena.runner` (round robin over processes, per-pair
statistics, ratings), :mod:`~rummy_agents.arena.stats` (Wilson, t intervals, Bradley-Terry),
:mod:`~rummy_agents.arena.report` (tables, CSV/JSON, heatmap).
"""

from rummy_agents.arena.registry import AGENTS, make_agent, register_agent
from rummy_agents.arena.report import markdown, write_outputs
from rummy_agents.arena.runner import (
    ArenaResult,
    ArenaSpec,
    PairStats,
    Rating,
    deal_seed,
    run_arena,
)
from rummy_agents.arena.stats import bradley_terry, bt_ratings, mean_interval, wilson_interval

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
