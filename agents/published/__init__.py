"""The published learned agent of each game, shipped in the package as small ``.npz`` files.

``ppo`` with no checkpoint plays them (``rummy-env arena --game rummy51 --agents ppo,greedy``);
from Python::

    from rummy_agents.published import published_agent

    agent = published_agent("gin_rummy")  # a PPOAgent
    action = agent.act(env.observe(env.agent_selection))

Each file holds the network's weights and what feeds it (game, rule options, observation
features), written by ``experiments/publish_agent.py`` from a training checkpoint; the agents'
cards (recipe and arena figures) are in ``docs/agents.md``. They play the default rules of their
game with 2 players (Gin Rummy's also plays a seat of 3- and 4-player Gin through
:class:`rummy_agents.TableSeatAgent`, which the arena adds).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

PUBLISHED = {
    "gin_rummy": "gin_rummy.npz",
    "five_hundred_rum": "five_hundred_rum.npz",
    "rummy51": "rummy51.npz",
}
"""The published agent's file of each game, in this package's folder."""


def published_path(game: str) -> Path:
    """Path of the published agent file of ``game``.

    Raises:
        ValueError: for a game with no published agent.
    """
    if not isinstance(game, str) or game not in PUBLISHED:
        raise ValueError(
            f"game must be one of {sorted(PUBLISHED)} (the games with a published agent), "
            f"got {game!r}"
        )
    return Path(str(resources.files(__name__) / PUBLISHED[game]))


def published_agent(game: str, seed: int | None = None, **kwargs: Any) -> Any:
    """The published agent of ``game`` as a :class:`rummy_agents.ppo_agent.PPOAgent`
    (``kwargs``: ``deterministic``).

    Raises:
        ValueError: for a game with no published agent.
    """
    from rummy_agents.ppo_agent import PPOAgent

    return PPOAgent(seed=seed, checkpoint=published_path(game), game=game, **kwargs)


__all__ = ["PUBLISHED", "published_agent", "published_path"]
