"""Training wrappers: a Gymnasium single-agent view of any game (one learner seat against fixed
opponents, with ``action_masks()`` for sb3-contrib's ``MaskablePPO``), its SB3 vectorised form,
and observation features for learned agents.
"""

from rummy_env.wrappers.features import (
    FEATURES,
    add_features,
    card_layout,
    default_features,
    feature_size,
)
from rummy_env.wrappers.single_agent import RummySingleAgentEnv, make_sb3_vec_env

__all__ = [
    "FEATURES",
    "RummySingleAgentEnv",
    "add_features",
    "card_layout",
    "default_features",
    "feature_size",
    "make_sb3_vec_env",
]
