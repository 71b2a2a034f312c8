"""``ppo_search`` told the opponent's hand: what a perfect opponent model would add.

The search plays each candidate move in determinizations drawn from a model of the opponent
(:func:`~rummy_agents.ismcts.gin.gin_belief_worlds`). ``ppo_search_oracle`` is the same search
whose every world holds the opponent's true hand (only the stock is shuffled anew): an upper
bound on what any opponent model can add, measured against the real one on the same deals.
It reads the referee's record, so it is a measurement, never an agent to play.

The arena runs in this process (``--workers 1`` is forced), where the agent is registered; the
arguments are those of ``rummy-env arena``. Example (docs/experiments.md, 2026-11-28)::

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python \
        experiments/search_oracle.py --game gin_rummy --episode hand \
        --agents ppo_search_oracle,simple --deals 400 --seed 21 --out runs/h_oracle
    python experiments/hands_to_matches.py runs/h_oracle/games.csv --base runs/h_base/games.csv
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np

from rummy_agents.arena.registry import register_agent
from rummy_agents.ismcts.hooks import GameHooks, resample_worlds
from rummy_agents.ismcts.policy import PolicySearchAgent


def oracle_worlds(view: Any, n: int, rng: np.random.Generator) -> Any:
    """``n`` copies of the true state, each with its stock reshuffled (the draws to come stay
    unknown; the opponent's hand does not)."""
    world = view.sample_worlds(1, rng)
    world.states[0] = view._env.state_record  # the referee's record: an oracle by design
    return resample_worlds(world, np.zeros(n, dtype=np.int64), rng)


class OracleSearch(PolicySearchAgent):
    """:class:`PolicySearchAgent` whose worlds hold the opponent's true hand."""

    name = "ppo_search_oracle"

    def __init__(self, seed: int | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("name", "ppo_search_oracle")
        super().__init__(seed=seed, **kwargs)

    def game_hooks(self, game: str) -> GameHooks:
        """The search's hooks with :func:`oracle_worlds` as the belief."""
        return dataclasses.replace(super().game_hooks(game), belief=oracle_worlds)


def main(argv: list[str] | None = None) -> int:
    """Run ``rummy-env arena`` in this process with ``ppo_search_oracle`` registered."""
    from rummy_agents.cli import main as cli

    register_agent(
        "ppo_search_oracle",
        f"{__name__}:OracleSearch",
        "ppo_search told the opponent's true hand (a measurement)",
        game="gin_rummy",
    )
    args = list(sys.argv[1:] if argv is None else argv)
    if "--workers" in args:
        i = args.index("--workers")
        del args[i : i + 2]
    return cli(["arena", *args, "--workers", "1"])


if __name__ == "__main__":
    sys.exit(main())
