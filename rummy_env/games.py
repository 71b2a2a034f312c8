"""The games of the suite: name -> (config class, batched engine: ``engine(config, num_games)``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rummy_env.rules.base import BatchedGame
from rummy_env.rules.five_hundred_rum.config import FiveHundredRumConfig
from rummy_env.rules.five_hundred_rum.game import FiveHundredRumGame
from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.gin_rummy.game import GinRummyGame
from rummy_env.rules.gin_rummy.multi_game import GinRummyMultiGame, make_gin_game
from rummy_env.rules.options import RuleOptions
from rummy_env.rules.rummy51.config import Rummy51Config
from rummy_env.rules.rummy51.game import Rummy51Game

GAMES: dict[str, tuple[type[RuleOptions], Callable[[Any, int], BatchedGame]]] = {
    "gin_rummy": (GinRummyConfig, make_gin_game),
    "five_hundred_rum": (FiveHundredRumConfig, FiveHundredRumGame),
    "rummy51": (Rummy51Config, Rummy51Game),
}

ENGINE_CLASSES: dict[str, tuple[type[BatchedGame], ...]] = {
    "gin_rummy": (GinRummyGame, GinRummyMultiGame),
    "five_hundred_rum": (FiveHundredRumGame,),
    "rummy51": (Rummy51Game,),
}
"""The classes of each game's batched engines (Gin Rummy: 2 players, and 3 or 4)."""
