"""Information-set Monte Carlo tree search: a game-agnostic search and per-game hooks.

- :mod:`~rummy_agents.ismcts.search`: :class:`ISMCTSAgent`, the search itself (tree,
  selection, progressive widening, batched rollouts, backup, the root strategies), written
  against the batched engine's generic API and a :class:`GameHooks`.
- :mod:`~rummy_agents.ismcts.hooks`: :class:`GameHooks`, what a game supplies (rollout policy,
  prior, observed chance outcomes, reward scale, belief, moves played without a search, anchor
  agent, default settings), and the pieces hooks share (random rollouts, world resampling).
- :mod:`~rummy_agents.ismcts.gin`: Gin Rummy's hooks and their compiled kernels.
- :mod:`~rummy_agents.ismcts.joker_games`: 500 Rum's and Rummy 51's hooks over the compiled
  policy of :mod:`rummy_agents.joker_rollouts`.
- :mod:`~rummy_agents.ismcts.games`: :data:`HOOKS`, the hooks by game name.

**How a game plugs in.** Write a module that builds a :class:`GameHooks` from plain Python
callables and add it to :data:`HOOKS` under the game's name (``view.game``). The search calls
the hooks in Python; a hook calls its game's compiled (numba) kernels, so no compiled function
is passed as an argument through numba's cache. Only ``rollout_actions`` is required; a game
without hooks is searched with :data:`GENERIC_HOOKS` (uniformly random rollouts).
``docs/ismcts.md`` has the measurements behind each game's defaults.

Example:
    >>> from rummy_env import gin_rummy_v0
    >>> from rummy_env.envs.view import SeatView
    >>> env = gin_rummy_v0.raw_env()
    >>> env.reset(seed=0)
    >>> agent = ISMCTSAgent(iterations=200, seed=0)
    >>> a = agent.act(env.observe(env.agent_selection), SeatView(env, env.agent_selection))
"""

from __future__ import annotations

from rummy_agents.ismcts.games import HOOKS, hooks_for
from rummy_agents.ismcts.gin import (
    GIN_BELIEF,
    GIN_DEFAULTS,
    GIN_HOOKS,
    GIN_OPPONENT_DEADWOOD,
    GinBelief,
    gin_belief_worlds,
    gin_hand_deadwood,
    gin_opponent_evidence,
    gin_prior_at,
    gin_rollout_actions,
)
from rummy_agents.ismcts.hooks import (
    GENERIC_HOOKS,
    SEARCH_DEFAULTS,
    GameHooks,
    random_rollout_actions,
    random_rollouts,
    resample_worlds,
)
from rummy_agents.ismcts.joker_games import (
    FIVE_HUNDRED_RUM_HOOKS,
    FIVE_HUNDRED_RUM_SCALE,
    JOKER_DEFAULTS,
    RUMMY51_HOOKS,
    RUMMY51_NOT_OPENED,
    RUMMY51_OVERSAMPLE,
    RUMMY51_SCALE,
    joker_params,
    rummy51_belief_worlds,
)
from rummy_agents.ismcts.search import (
    BELIEFS,
    KNOCKS,
    OBJECTIVES,
    ROLLOUTS,
    ROOTS,
    ISMCTSAgent,
    SearchStats,
    objective_values,
    zero_sum,
)

__all__ = [
    "BELIEFS",
    "FIVE_HUNDRED_RUM_HOOKS",
    "GENERIC_HOOKS",
    "GIN_BELIEF",
    "GIN_DEFAULTS",
    "GIN_HOOKS",
    "GIN_OPPONENT_DEADWOOD",
    "HOOKS",
    "JOKER_DEFAULTS",
    "KNOCKS",
    "OBJECTIVES",
    "RUMMY51_NOT_OPENED",
    "RUMMY51_OVERSAMPLE",
    "RUMMY51_SCALE",
    "ROLLOUTS",
    "ROOTS",
    "RUMMY51_HOOKS",
    "FIVE_HUNDRED_RUM_SCALE",
    "SEARCH_DEFAULTS",
    "GameHooks",
    "GinBelief",
    "ISMCTSAgent",
    "SearchStats",
    "gin_belief_worlds",
    "gin_hand_deadwood",
    "gin_opponent_evidence",
    "gin_prior_at",
    "gin_rollout_actions",
    "hooks_for",
    "joker_params",
    "objective_values",
    "rummy51_belief_worlds",
    "random_rollout_actions",
    "random_rollouts",
    "resample_worlds",
    "zero_sum",
]
