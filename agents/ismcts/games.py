"""The search hooks of each game of the suite, by the suite's game name (``view.game``).

A new game plugs in by writing a module that builds its :class:`~rummy_agents.ismcts.hooks.
GameHooks` (as :mod:`rummy_agents.ismcts.gin` and :mod:`rummy_agents.ismcts.joker_games` do)
and adding it to :data:`HOOKS` under its name in :data:`rummy_env.games.GAMES`. A game left out
is searched with :data:`~rummy_agents.ismcts.hooks.GENERIC_HOOKS` (random rollouts).
"""

from __future__ import annotations

from rummy_agents.ismcts.gin import GIN_HOOKS
from rummy_agents.ismcts.hooks import GENERIC_HOOKS, GameHooks
from rummy_agents.ismcts.joker_games import FIVE_HUNDRED_RUM_HOOKS, RUMMY51_HOOKS

HOOKS: dict[str, GameHooks] = {
    "gin_rummy": GIN_HOOKS,
    "five_hundred_rum": FIVE_HUNDRED_RUM_HOOKS,
    "rummy51": RUMMY51_HOOKS,
}
"""Game name -> its hooks."""


def hooks_for(game: str) -> GameHooks:
    """The hooks of ``game`` (:data:`HOOKS`), else :data:`GENERIC_HOOKS`."""
    return HOOKS.get(game, GENERIC_HOOKS)


__all__ = ["HOOKS", "hooks_for"]
