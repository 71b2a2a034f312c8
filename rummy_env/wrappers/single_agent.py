"""Gymnasium single-agent view of a rummy game: one learner seat against fixed opponents.

The learner acts in one seat; every other seat is played by an opponent: an agent object
(``act(observation, view)``), a plain callable ``policy(observation, view) -> action``, an agent
factory (``build(seed) -> agent``, rebuilt at every reset with a seed from the env's generator,
such as ``rummy_agents.agent_spec("simple")``), or ``None`` for uniformly random legal actions.
Agents are looked up by name on the agents side, never here. A step is one learner decision
followed by the opponents' decisions up to the learner's next turn (or the end of the episode);
the reward is the sum of the learner's rewards over those decisions.

``action_masks()`` returns the learner's legal actions, the method sb3-contrib's ``MaskablePPO``
looks for, so ``MaskablePPO("MlpPolicy", RummySingleAgentEnv("gin_rummy"))`` trains out of the
box; :func:`make_sb3_vec_env` builds the vectorised form (many games per SB3 step).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from rummy_env.core.jit import entry_point
from rummy_env.core.validate import (
    check_action,
    check_choice,
    check_int,
    check_options,
    check_seed,
)
from rummy_env.envs.view import SeatView

ILLEGAL_ACTIONS = ("random", "raise")


@runtime_checkable
class AgentFactory(Protocol):
    """Builds a freshly seeded agent (``rummy_agents.agent_spec(name)`` is one)."""

    def build(self, seed: int) -> Any:
        """An agent seeded with ``seed``."""
        ...


@runtime_checkable
class ObservationFeatures(Protocol):
    """Extra observation entries a learner reads (``rummy_agents.features.FeatureSet``)."""

    size: int
    """Number of entries appended to the observation."""

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """``obs`` with the features appended."""
        ...


OpponentLike = Any
"""An agent object, a callable ``policy(observation, view) -> action``, an
:class:`AgentFactory`, or ``None`` (uniformly random legal actions)."""


class _RandomLegal:
    """Uniformly random legal actions from a seeded generator."""

    name = "random"

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], view: Any = None) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.rng.integers(legal.size)])


class _Policy:
    """A plain callable ``policy(observation, view)`` as an agent."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "policy")

    def act(self, observation: dict[str, np.ndarray], view: Any = None) -> int:
        return int(self.fn(observation, view))


def _check_opponent(k: int, opp: Any) -> None:
    if opp is None or isinstance(opp, AgentFactory) or hasattr(opp, "act") or callable(opp):
        return
    hint = ""
    if isinstance(opp, str):
        hint = (
            f"; agents are looked up by name on the agents side: rummy_agents.agent_spec({opp!r})"
        )
    raise TypeError(
        f"opponents[{k}] must be an agent (act(observation, view)), a callable "
        f"policy(observation, view), an agent factory (build(seed)) or None, "
        f"got {type(opp).__name__} {opp!r}{hint}"
    )


def _common_policy(agents: Sequence[Any], game: Any) -> Any:
    """The compiled policy that every agent of ``agents`` offers for ``game`` (their
    ``compiled_policy(game)``, ``rummy_agents.opponent_loop``), the same parameters for all;
    None if one offers none or they differ (the env then plays them in Python).
    """
    found = []
    for agent in agents:
        offer = getattr(agent, "compiled_policy", None)
        cp = None if offer is None else offer(game)
        if cp is None:
            return None
        found.append(cp)
    first = found[0]
    for cp in found[1:]:
        if len(cp.params) != len(first.params):
            return None
        for x, y in zip(cp.params, first.params, strict=True):
            if type(x) is not type(y) or not np.array_equal(x, y):
                return None
    return first


def _builder(opp: Any) -> Callable[[int], Any]:
    """How a reset makes the opponent of spec ``opp`` from its drawn seed."""
    if opp is None:
        return _RandomLegal
    if isinstance(opp, AgentFactory):
        return opp.build
    if hasattr(opp, "act"):
        return lambda _seed: opp
    return lambda _seed: _Policy(opp)


class RummySingleAgentEnv(gym.Env):
    """One seat of a rummy game as a Gymnasium env; the other seats are fixed opponents.

    Observations are the learner's observation vector (``float32``, with the extra features of
    ``features`` appended); actions are the game's action ids. Illegal actions cannot happen
    with a masked learner; a plain ``action_space.sample()`` (as in Gymnasium's ``check_env``)
    may pick one, so by default it is replaced by a uniformly random legal action drawn from
    the env's seeded generator (``info["illegal_action"]`` is then True).

    Args:
        game: game name (``"gin_rummy"``, ``"five_hundred_rum"``, ``"rummy51"``): the env of
            ``rummy_env.ENV_MODULES[game]``.
        opponents: one opponent for every other seat, or a sequence with one per opponent seat
            (in seat order, skipping the learner): an agent object, a callable
            ``policy(observation, view)``, an agent factory (``build(seed)``: rebuilt at each
            reset with a seed drawn from the env's generator, so a seeded reset replays
            exactly), or ``None``: uniformly random legal actions (also reseeded each reset).
        learner_seat: the learner's seat; ``None`` draws it at each reset (every seat seen).
        features: extra observation entries for the learner (``size`` and
            ``features(obs) -> obs with them appended``, such as
            ``rummy_agents.features.FeatureSet``), or ``None``.
        illegal_action: ``"random"`` (replace, see above) or ``"raise"`` (``ValueError``).
        render_mode: ``"ansi"`` (the table as text) or ``"rgb_array"`` (a picture of the
            table, (720, 1280, 3) ``uint8``; Gymnasium's ``RecordVideo`` records it).
        render_view: whose view the picture shows: ``None`` (the referee's, every card face
            up), ``"learner"`` (the learner's seat, whichever it is this episode) or an agent
            name such as ``"player_1"``.
        **options: the game's rule options.

    In 3- and 4-player Gin Rummy the learner's observation is the whole seat's (the 2-player
    hand first); 2-player agents as opponents go in ``rummy_agents.TableSeatAgent``, which hands
    them the hand their seat plays. A deal whose episode ends before the learner's first
    decision (3 players, ``episode="hand"``: the learner sat out) is skipped at ``reset``.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        game: str = "gin_rummy",
        opponents: OpponentLike | Sequence[OpponentLike] = None,
        learner_seat: int | None = None,
        features: ObservationFeatures | None = None,
        illegal_action: str = "random",
        render_mode: str | None = None,
        render_view: str | None = None,
        **options: Any,
    ) -> None:
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTIONS}")
        from rummy_env import ENV_MODULES

        if game not in ENV_MODULES:
            raise ValueError(f"game must be one of {sorted(ENV_MODULES)}, got {game!r}")
        mod = ENV_MODULES[game]
        self.game = game
        if render_mode is not None:
            check_choice("render_mode", render_mode, self.metadata["render_modes"])
        self.aec = mod.raw_env(render_mode=render_mode, **options)
        self.render_mode = render_mode
        self.num_players = len(self.aec.possible_agents)
        if render_view is not None:
            check_choice("render_view", render_view, ["learner", *self.aec.possible_agents])
        self.render_view = render_view
        n_opp = self.num_players - 1
        if isinstance(opponents, (str, bytes)) or not isinstance(opponents, Sequence):
            opponents = [opponents] * n_opp
        if len(opponents) != n_opp:
            raise ValueError(f"need {n_opp} opponent(s), got {len(opponents)}")
        for k, opp in enumerate(opponents):
            _check_opponent(k, opp)
        if features is not None and not isinstance(features, ObservationFeatures):
            raise TypeError(
                f"features must have size and __call__(obs) (rummy_agents.features.FeatureSet) "
                f"or be None, got {type(features).__name__} {features!r}"
            )
        self._opponent_specs = list(opponents)
        self._factories = all(isinstance(o, AgentFactory) for o in self._opponent_specs)
        # how each reset builds the opponents (the protocol check costs microseconds)
        self._builders = [_builder(o) for o in self._opponent_specs]
        self._alike = all(getattr(o, "builds_alike", False) for o in self._opponent_specs)
        self._template: Any = None  # the compiled policy every episode's opponents share
        self._opponent_seeds: dict[str, int] = {}
        if learner_seat is not None:
            learner_seat = check_int("learner_seat", learner_seat, 0, self.num_players - 1)
        self.fixed_seat = learner_seat
        self.features = features
        self.illegal_action = illegal_action
        agent0 = self.aec.possible_agents[0]
        base = self.aec.observation_space(agent0)["observation"]
        self.num_actions = int(self.aec.action_space(agent0).n)
        extra = 0 if features is None else int(features.size)  # feature planes: no bounds
        self.observation_space = spaces.Box(
            np.concatenate([base.low, np.full(extra, -np.inf, np.float32)]),
            np.concatenate([base.high, np.full(extra, np.inf, np.float32)]),
            dtype=np.float32,
        )
        self.action_space = spaces.Discrete(self.num_actions)
        self.learner_seat = 0 if learner_seat is None else learner_seat
        self._opponents: dict[str, Any] = {}
        self._views: dict[str, SeatView] = {}
        self._done = True
        self._compiled: Any = None  # the opponents' compiled policy, this episode (if any)
        self._gens = np.zeros((n_opp, 6), dtype=np.uint64)  # their generators, there
        # the compiled loop's observations: the opponent deciding, the learner's at its return
        self._obs_buf = np.zeros((2, self.aec.game.obs_size), dtype=np.float32)
        self._obs_ready = False  # the learner's row holds its observation now
        self._single: Any = None  # its compiled step, called without numba's dispatch
        self._single_args: tuple[Any, ...] = ()
        self._kinds: tuple[Any, ...] = ()  # the parameter types it was compiled for

    # -- helpers ------------------------------------------------------------------------------
    @property
    def learner(self) -> str:
        """The learner's agent name."""
        return self.aec.possible_agents[self.learner_seat]

    def _obs(self) -> np.ndarray:
        # the learner's observation vector, as ``aec.observe(learner)`` builds it (the compiled
        # loop wrote it when it returned)
        if self._obs_ready:
            self._obs_ready = False
            raw = self._obs_buf[1].copy()
        else:
            raw = self.aec.game.observe_unchecked(0, self.learner_seat)
        return raw if self.features is None else self.features(raw)

    def _finished(self) -> tuple[bool, bool]:
        # the AEC env ends every seat's episode at once, so the learner's flags are everyone's
        learner = self.aec.possible_agents[self.learner_seat]
        trunc = self.aec.truncations[learner]
        return self.aec.terminations[learner] and not trunc, trunc

    def _opponent(self, name: str) -> Any:
        """The opponent of seat ``name`` this episode, built from its seed at first use."""
        agent = self._opponents.get(name)
        if agent is None:
            agent = self._builders[self._opponent_names.index(name)](self._opponent_seeds[name])
            self._opponents[name] = agent
            self._views[name] = SeatView(self.aec, name)
        return agent

    def _compile_opponents(self) -> None:
        """Play this episode's opponents compiled (``rummy_agents.opponent_loop.play_single``)
        where they can be: agents built by factories (the env's own, so their generators may
        live in arrays during the episode) that offer ``compiled_policy`` with the same
        parameters; not at 3- and 4-player Gin Rummy tables.

        Factories that build alike (``builds_alike``: a fixed class and arguments, such as the
        registry's entries) of agents whose only seeded part is ``default_rng(seed)``
        (``rng_from_seed``, ``rummy_agents.pcg64.SeededGenerator``) give the same compiled
        policy every episode: it is kept from the first, and later episodes seed the loop's
        generators from the drawn seeds and build an agent only when the Python reference
        plays one of its moves.
        """
        self._compiled = None
        if self.aec._several_tables or not self._factories:
            return
        first = self._template
        if first is None:
            agents = [self._opponent(a) for a in self._opponent_names]
            first = _common_policy(agents, self.aec.game)
            if first is None:
                return
            if self._alike and all(getattr(a, "rng_from_seed", False) for a in agents):
                self._template = first
            for k, agent in enumerate(agents):
                write = getattr(agent, "write_rng_state", None)  # from the seed, if unbuilt
                if write is None:
                    first.state_of(agent.rng, self._gens[k])
                else:
                    write(self._gens[k])
        else:
            for k, name in enumerate(self._opponent_names):
                first.seed_state(self._opponent_seeds[name], self._gens[k])  # default_rng(seed)
        names = self.aec.possible_agents
        self._cum = np.array([self.aec._cumulative_rewards[a] for a in names], dtype=np.float64)
        g = self.aec.game
        kinds = tuple(
            (type(x), x.dtype, x.ndim) if isinstance(x, np.ndarray) else type(x)
            for x in first.params
        )
        if self._single is None or self._single_args[0] is not g.states or kinds != self._kinds:
            self._kinds = kinds
            saved, scratch = first.single_scratch(first.params, self.num_actions)
            args = (
                g.states, g.cfg, g.tables, g.masks, self._obs_buf, self.num_actions,
                self.learner_seat, -1, -1, np.zeros(self.num_players), 0, 0.0, first.params,
                self._gens, saved, scratch,
            )  # fmt: skip
            # called without numba's dispatch: typing the record array costs a millisecond,
            # and the types stay those of these arguments (an env's agents are of one kind)
            self._single = entry_point(first.single, *args)
            self._single_args = args
        args = self._single_args
        self._single_args = (*args[:6], self.learner_seat, *args[7:12], first.params, *args[13:])
        self._compiled = first

    def _play_compiled(self, action: int) -> tuple[float, float, bool, bool]:
        """The learner's ``action`` (-1: none) and the opponents' moves up to its next turn, in
        compiled calls; the AEC env's bookkeeping is brought up to date after each (as its own
        ``step`` leaves it). Returns (learner's reward of its step, of the opponents' steps,
        term, trunc).
        """
        aec, cp = self.aec, self._compiled
        names = aec.possible_agents
        cum = self._cum  # the AEC env's _cumulative_rewards, kept alike
        own = more = 0.0
        states, cfg, tables, masks, obs, na, seat, _, _, _, _, _, params, gens, saved, scratch = (
            self._single_args
        )
        single = self._single
        pending = -1
        while True:
            status, q, a, own_k, more, done, trunc, hands, x, cur = single(
                states, cfg, tables, masks, obs, na, seat, int(action), pending, cum,
                int(aec._hands_played), float(more), params, gens, saved, scratch,
            )  # fmt: skip
            own += own_k  # the learner's own step is in one call only
            action = pending = -1
            if q >= 0:
                aec._after_steps(q, a, cum.tolist(), done, trunc, hands, cur)
            if status == 0 or done:
                self._obs_ready = status == 0 or status == 3  # the loop wrote it
                return (own, more, *self._finished())
            if status == 4:  # seat cur played x, whose transition the game settles apart
                aec.game.settle_pending(0)
                pending, action = cur, x
                continue
            if status == 1:  # the reference decides: the seat's agent, with its generator
                agent_name = aec.agent_selection
                agent = self._opponent(agent_name)
                agent.rng = cp.to_generator(self._gens[x])
                choice = int(agent.act(aec.observe(agent_name), self._views[agent_name]))
                cp.state_of(agent.rng, self._gens[x])
                aec.step(choice)
                more += float(aec.rewards[names[self.learner_seat]])
                cum[:] = [aec._cumulative_rewards[n] for n in names]
            elif status == 2:
                aec.step(x)  # raises the AEC env's ValueError for the illegal move

    def _play_opponents(self) -> tuple[float, bool, bool]:
        """Opponents act until the learner's turn or the end; returns (learner reward, term,
        trunc) accumulated over their decisions.
        """
        self._obs_ready = False
        if self._compiled is not None:
            _, more, term, trunc = self._play_compiled(-1)
            return more, term, trunc
        reward = 0.0
        aec = self.aec
        learner = aec.possible_agents[self.learner_seat]
        term, trunc = self._finished()
        while not (term or trunc) and aec.agent_selection != learner:
            agent = aec.agent_selection
            obs = aec.observe(agent)
            aec.step(int(self._opponent(agent).act(obs, self._views[agent])))
            reward += float(aec.rewards[learner])
            term, trunc = self._finished()
        return reward, term, trunc

    def _info(self) -> dict[str, Any]:
        return {"learner_seat": self.learner_seat, **self.aec.infos.get(self.learner, {})}

    # -- Gymnasium API ------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new episode and play the opponents up to the learner's first decision.

        ``options`` may hold ``learner_seat``, ``deck`` and ``dealer`` (see the AEC env). They
        are checked before anything changes (the env's generator included).
        """
        check_seed("seed", seed)
        options = check_options("options", options)
        seat = options.pop("learner_seat", self.fixed_seat)
        if seat is not None:
            seat = check_int("options['learner_seat']", seat, 0, self.num_players - 1)
        if options.get("dealer") is not None:
            self.aec.game.check_dealer("options['dealer']", options["dealer"])
        if options.get("deck") is not None:
            self.aec.game.check_deck("options['deck']", options["deck"])
        super().reset(seed=seed)
        rng = self.np_random
        self.learner_seat = int(rng.integers(self.num_players)) if seat is None else seat
        for _ in range(1000):
            self.aec.reset(seed=int(rng.integers(2**31 - 1)), options=options or None)
            others = [a for a in self.aec.possible_agents if a != self.learner]
            self._opponent_names = others
            self._opponent_seeds = {a: int(rng.integers(2**31 - 1)) for a in others}
            self._opponents = {}  # built by _opponent(name) when needed
            self._views = {}
            if self._template is None:
                for a in others:
                    self._opponent(a)
            self._compile_opponents()
            _, term, trunc = self._play_opponents()
            self._done = term or trunc
            if not self._done:
                break
            # the episode ended before the learner's first decision (3-player Gin: it sat out
            # the one hand): a Gymnasium episode starts where the learner acts, so deal again
            options = {}
        return self._obs(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """One learner decision, then the opponents' decisions up to the learner's next one."""
        if self._done:
            raise RuntimeError("episode is over: call reset()")
        mask = self._mask()
        a = action if type(action) is int else check_action("action", action)
        illegal = not (0 <= a < self.num_actions and mask[a] == 1)
        if illegal:
            if self.illegal_action == "raise":
                raise ValueError(f"action {a} is not legal now")
            legal = np.flatnonzero(mask)
            a = int(legal[self.np_random.integers(legal.size)])
        self._obs_ready = False
        if self._compiled is not None:
            reward, more, term, trunc = self._play_compiled(a)
        else:
            self.aec.step(a)
            reward = float(self.aec.rewards[self.aec.possible_agents[self.learner_seat]])
            more, term, trunc = self._play_opponents()
        self._done = term or trunc
        info = self._info()
        info["illegal_action"] = illegal
        return self._obs(), reward + more, term, trunc, info

    def _mask(self) -> np.ndarray:
        """The learner's legal-action mask (int8; the live row of the game, not a copy: read
        it at once), all zeros once the episode is over.
        """
        if self._done or self.aec.agent_selection != self.aec.possible_agents[self.learner_seat]:
            return np.zeros(self.num_actions, dtype=np.int8)
        return self.aec._mask_row

    def action_masks(self) -> np.ndarray:
        """(A,) bool mask of the learner's legal actions (all False once the episode is over)."""
        return self._mask().astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The table: its text (``"ansi"``) or its picture (``"rgb_array"``, in the view of
        ``render_view``).
        """
        if self.render_mode == "rgb_array":
            view = self.learner if self.render_view == "learner" else self.render_view
            return self.aec.render_picture(view)
        return self.aec.render()

    def close(self) -> None:
        """Close the AEC env."""
        self.aec.close()


def make_sb3_vec_env(
    game: str = "gin_rummy",
    n_envs: int = 8,
    seed: int = 0,
    subprocess: bool = False,
    **kwargs: Any,
) -> Any:
    """``n_envs`` single-agent games as one SB3 ``VecEnv`` (``MaskablePPO`` reads
    ``action_masks`` through ``env_method``), each game seeded ``seed + i``.

    Args:
        game: game name.
        n_envs: number of games stepped per SB3 step.
        seed: base seed.
        subprocess: ``SubprocVecEnv`` (one process per game) instead of ``DummyVecEnv``; on a
            2-core machine the in-process form is usually faster.
        **kwargs: :class:`RummySingleAgentEnv` arguments and rule options.
    """
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    def thunk(i: int) -> Callable[[], gym.Env]:
        def make() -> gym.Env:
            env = Monitor(RummySingleAgentEnv(game, **kwargs))
            env.reset(seed=seed + i)
            return env

        return make

    fns = [thunk(i) for i in range(n_envs)]
    venv = SubprocVecEnv(fns) if subprocess else DummyVecEnv(fns)
    venv.seed(seed)
    return venv


__all__ = [
    "ILLEGAL_ACTIONS",
    "AgentFactory",
    "ObservationFeatures",
    "RummySingleAgentEnv",
    "make_sb3_vec_env",
]
