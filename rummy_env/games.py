"""The games of the suite: name -> (config class, batched engine class)."""

from __future__ import annotations

from rummy_env.rules.gin_rummy.config import GinRummyConfig
from rummy_env.rules.gin_rummy.game import GinRummyGame

GAMES = {
    "gin_rummy": (GinRummyConfig, GinRummyGame),
}
