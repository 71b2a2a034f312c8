"""Training wrappers: a Gymnasium single-agent view of any game (one learner seat against fixed
opponents, with ``action_masks()`` for sb3-contrib's ``MaskablePPO``) and its SB3 vectorised form.
Learned agents' observation features live on the agents side (``rummy_agents.features``).
"""

from rummy_env.wrappers.single_agent import (
    AgentFactory,
    ObservationFeatures,
    RummySingleAgentEnv,
    make_sb3_vec_env,
)

__all__ = ["AgentFactory", "ObservationFeatures", "RummySingleAgentEnv", "make_sb3_vec_env"]
