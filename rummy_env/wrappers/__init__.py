"""Training wrappers: a Gymnasium single-agent view of any game (one learner seat against fixed
opponents, with ``action_masks()`` for sb3-contrib's ``MaskablePPO``), its SB3 vectorised form,
and its native Gymnasium vector env over the batched core (``RummySingleAgentVectorEnv``, what
``gymnasium.make_vec("rummy/GinRummy-v0", num_envs=N)`` returns).
Learned agents' observation features live on the agents side (``rummy_agents.features``).
"""

from rummy_env.wrappers.single_agent import (
    AgentFactory,
    ObservationFeatures,
    RummySingleAgentEnv,
    make_sb3_vec_env,
)
from rummy_env.wrappers.single_agent_vec import RummySingleAgentVectorEnv

__all__ = [
    "AgentFactory",
    "ObservationFeatures",
    "RummySingleAgentEnv",
    "RummySingleAgentVectorEnv",
    "make_sb3_vec_env",
]
