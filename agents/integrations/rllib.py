"""The rummy games as an RLlib multi-agent env (new API stack), with action masks.

:class:`RummyMultiAgentEnv` is a ``ray.rllib.env.multi_agent_env.MultiAgentEnv`` over a game's
AEC env. Each agent's observation is the dict RLlib's action-masking RL module reads
(``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``)::

    {"observations": float32 (obs_size,), "action_mask": float32 (num_actions,) of 0/1}

(RLlib's ``PettingZooEnv`` passes the PettingZoo dict as it is, ``"observation"`` and an int8
mask, hence the ``KeyError: 'observations'`` with that module.)

The game is turn-based: a step takes the action of the one agent to act and returns an
observation for the next agent to act only (often the same agent: a draw, then its discard).
Rewards that reach an agent while it waits (a hand scored on another player's move) are kept
and paid with its next observation; when the episode ends every agent gets its last observation
(all-zero mask), its remaining rewards and ``terminated`` (or ``truncated`` with the
``max_steps`` option), so each agent's rewards over an episode sum to its result in the AEC env.
Infos are the AEC env's (``outcome``, ``hand_points``, ...).

``env_config`` holds ``"game"`` (default ``"gin_rummy"``), optionally ``"illegal_action"``
(below), and any of the game's rule options (``{"game": "rummy51", "num_players": 3}``); an
unknown game or option raises ``ValueError`` naming it.

A masked policy never plays an illegal action; RLlib's env check (and an unmasked module) may:
with ``"illegal_action": "random"`` (the default, as ``RummySingleAgentEnv``) it is replaced by a
uniformly random legal action from the env's seeded generator, counted in
``num_illegal_actions`` and flagged ``info["illegal_action"]`` in the agent's next infos; with
``"raise"`` it raises ``ValueError``.

Importing this module registers the env with Tune as ``"rummy_env"`` (:data:`ENV_NAME`), so
``PPOConfig().environment("rummy_env", env_config={...})`` works, on a Ray cluster too (every
node needs ``rummy_env`` installed); passing the class,
``.environment(RummyMultiAgentEnv, env_config={...})``, works as well.

Needs the ``rllib`` extra: ``pip install -c constraints.txt "rummy_env[rllib]"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ray.rllib.utils.typing import AgentID, MultiAgentDict

try:
    import gymnasium as gym
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.tune.registry import register_env as _tune_register_env
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "rummy_agents.integrations.rllib needs Ray RLlib, which is not installed: "
        "pip install -c constraints.txt 'rummy_env[rllib]' (the 'rllib' extra: ray[rllib], "
        f"torch); the import failed with: {exc}"
    ) from exc

ENV_NAME = "rummy_env"
"""The name the env is registered under with ``ray.tune.registry.register_env``."""

ILLEGAL_ACTIONS = ("random", "raise")
OBS_KEY = "observations"
MASK_KEY = "action_mask"


class RummyMultiAgentEnv(MultiAgentEnv):
    """One rummy game as an RLlib ``MultiAgentEnv`` (turn-based, masked observations).

    Args:
        config: the ``env_config``: ``"game"`` (``"gin_rummy"``, ``"five_hundred_rum"`` or
            ``"rummy51"``; default ``"gin_rummy"``), ``"illegal_action"`` (``"random"``, the
            default, or ``"raise"``), ``"render_mode"`` (``"ansi"``) and the game's rule
            options. An RLlib ``EnvContext`` is a dict and is read the same way.

    Raises:
        TypeError: ``config`` is not a mapping with string keys.
        ValueError: an unknown game, or an unknown or bad rule option (the message names it).
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        if config is None:
            config = {}
        if not isinstance(config, Mapping):
            raise TypeError(f"env_config must be a dict, got {type(config).__name__}")
        options = dict(config)
        bad = [k for k in options if not isinstance(k, str)]
        if bad:
            raise TypeError(f"env_config keys must be strings, got {bad!r}")
        game = options.pop("game", "gin_rummy")
        illegal = options.pop("illegal_action", "random")
        if illegal not in ILLEGAL_ACTIONS:
            raise ValueError(
                f"env_config['illegal_action'] must be one of {ILLEGAL_ACTIONS}, got {illegal!r}"
            )
        from rummy_env import ENV_MODULES

        if game not in ENV_MODULES:
            raise ValueError(
                f"env_config['game'] must be one of {sorted(ENV_MODULES)}, got {game!r}"
            )
        try:
            self.aec = ENV_MODULES[game].raw_env(**options)
        except ValueError as exc:  # names the option; say where it came from
            raise type(exc)(f"env_config: {exc}") from exc
        self.game = game
        self.options = options
        self.illegal_action = illegal
        self.num_illegal_actions = 0
        self._rng = np.random.default_rng()
        self._flags: dict[AgentID, dict[str, Any]] = {}
        self.agents = self.possible_agents = list(self.aec.possible_agents)
        agent0 = self.possible_agents[0]
        base = self.aec.observation_space(agent0)["observation"]
        self.num_actions = int(self.aec.action_space(agent0).n)
        space = gym.spaces.Dict(
            {
                OBS_KEY: gym.spaces.Box(base.low, base.high, dtype=np.float32),
                MASK_KEY: gym.spaces.Box(0.0, 1.0, (self.num_actions,), dtype=np.float32),
            }
        )
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {
            a: gym.spaces.Discrete(self.num_actions) for a in self.possible_agents
        }
        # RLlib types agent ids as Hashable | str; ours are str (the AEC env's names)
        self.observation_space = gym.spaces.Dict(self.observation_spaces)  # type: ignore[arg-type]
        self.action_space = gym.spaces.Dict(self.action_spaces)  # type: ignore[arg-type]
        self._pending = {a: 0.0 for a in self.possible_agents}
        self._done = True

    def _observe(self, agent: AgentID) -> dict[str, np.ndarray]:
        raw = self.aec.observe(agent)
        return {
            OBS_KEY: np.asarray(raw["observation"], dtype=np.float32),
            MASK_KEY: raw["action_mask"].astype(np.float32),
        }

    # RLlib's multi-agent reset replaces gymnasium's single-agent one (as MultiAgentEnv's does)
    def reset(  # type: ignore[override]
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[MultiAgentDict, MultiAgentDict]:
        """Deal a new episode; the observation is the first agent to act's.

        ``options`` go to the AEC env's ``reset`` (``deck``, ``dealer``).
        """
        self.aec.reset(seed=seed, options=options)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._pending = {a: 0.0 for a in self.possible_agents}
        self._flags = {}
        self._done = False
        agent = self.aec.agent_selection
        return {agent: self._observe(agent)}, {agent: {}}

    # RLlib's multi-agent step replaces gymnasium's single-agent one (as MultiAgentEnv's
    # does), and our agent ids are str where RLlib's are Hashable | str
    def step(  # type: ignore[override]
        self, action_dict: Mapping[str, Any]
    ) -> tuple[MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict]:
        """Play the acting agent's action (the one key expected in ``action_dict``).

        Raises:
            RuntimeError: the episode is over (call ``reset``).
            ValueError: ``action_dict`` has no action for the agent to act, or (with
                ``illegal_action="raise"``) the action is illegal (mask the logits, as RLlib's
                ``ActionMaskingTorchRLModule`` does).
        """
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        agent = self.aec.agent_selection
        if agent not in action_dict:
            raise ValueError(
                f"action_dict must hold an action for {agent!r}, the agent to act; "
                f"got keys {sorted(action_dict)}"
            )
        action = action_dict[agent]
        mask = self.aec.observe(agent)["action_mask"]
        a = action.item() if isinstance(action, np.ndarray) and action.shape == () else action
        is_int = isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
        if self.illegal_action == "random" and not (is_int and 0 <= a < mask.size and mask[a]):
            legal = np.flatnonzero(mask)
            a = int(legal[self._rng.integers(legal.size)])
            self.num_illegal_actions += 1
            self._flags[agent] = {"illegal_action": True}
        try:
            self.aec.step(a)
        except ValueError as exc:
            raise ValueError(
                f"{agent} played action {action!r}, which is not legal ({exc}); mask the "
                "logits with the observation's 'action_mask' (ActionMaskingTorchRLModule)"
            ) from exc
        for a in self.possible_agents:
            self._pending[a] += float(self.aec.rewards[a])
        terminated = all(self.aec.terminations[a] for a in self.possible_agents)
        truncated = any(self.aec.truncations[a] for a in self.possible_agents)
        if terminated or truncated:
            self._done = True
            ids = self.possible_agents
            terminated = terminated and not truncated
        else:
            ids = [self.aec.agent_selection]
        obs = {a: self._observe(a) for a in ids}
        rewards = {a: self._pending[a] for a in ids}
        for a in ids:
            self._pending[a] = 0.0
        infos = {a: {**self.aec.infos.get(a, {}), **self._flags.pop(a, {})} for a in ids}
        terms = {a: terminated for a in ids}
        truncs = {a: truncated for a in ids}
        terms["__all__"] = terminated
        truncs["__all__"] = truncated
        return obs, rewards, terms, truncs, infos

    # MultiAgentEnv.render is typed as returning None; the ansi mode returns the text
    def render(self) -> str | None:  # type: ignore[override]
        """The table as text (``env_config={"render_mode": "ansi", ...}``)."""
        return self.aec.render()

    def close(self) -> None:
        """Nothing to release."""
        self.aec.close()


def env_creator(env_config: Mapping[str, Any] | None = None) -> RummyMultiAgentEnv:
    """The creator registered with Tune: ``RummyMultiAgentEnv(env_config)``."""
    return RummyMultiAgentEnv(env_config)


def register(name: str = ENV_NAME) -> str:
    """Register the env with ``ray.tune.registry.register_env`` under ``name``; returns it."""
    _tune_register_env(name, env_creator)
    return name


def action_masking_module_class() -> type:
    """RLlib's action-masking PPO module (``ActionMaskingTorchRLModule`` of RLlib's examples).

    It reads the ``"observations"`` and ``"action_mask"`` entries of this env's observations
    and adds ``log(mask)`` (clipped) to the logits, so masked actions are never sampled.
    """
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )

    return ActionMaskingTorchRLModule


class RLModulePolicy:
    """A trained RLlib RL module (an action-masking one) as a greedy masked policy.

    ``policy(observation, action_mask) -> action`` (what
    :func:`rummy_agents.integrations.evaluate` plays) and ``act(observation_dict, view)``
    (the agents' protocol, so the arena and ``RummySingleAgentEnv`` can seat it). The action
    is the legal action with the highest logit (illegal ones are never chosen, whatever the
    module does with the mask).
    """

    name = "rllib"

    def __init__(self, module: Any) -> None:
        self.module = module

    def __call__(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The greedy legal action for one observation vector and its mask."""
        import torch

        mask = np.asarray(action_mask, dtype=np.float32)
        batch = {
            "obs": {
                OBS_KEY: torch.as_tensor(np.asarray(observation, np.float32)[None]),
                MASK_KEY: torch.as_tensor(mask[None]),
            }
        }
        with torch.no_grad():
            out = self.module.forward_inference(batch)
        logits = np.asarray(out["action_dist_inputs"][0].detach().cpu().numpy(), np.float64)
        logits = np.where(mask > 0, logits, -np.inf)
        return int(np.argmax(logits))

    def act(self, observation: dict[str, np.ndarray], view: Any = None) -> int:
        """The agents' protocol: ``observation`` is the AEC env's dict."""
        return self(observation["observation"], observation["action_mask"])


register()

__all__ = [
    "ENV_NAME",
    "MASK_KEY",
    "OBS_KEY",
    "RLModulePolicy",
    "RummyMultiAgentEnv",
    "action_masking_module_class",
    "env_creator",
    "register",
]
