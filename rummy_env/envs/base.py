"""A PettingZoo AEC env over a ``BatchedGame`` of one game (shared by the rummy variants)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import (
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)

from rummy_env.core.validate import (
    ArgumentTypeError,
    ResetNeeded,
    check_action,
    check_agent,
    check_choice,
    check_int,
    check_options,
    check_seed,
)
from rummy_env.render.table import TableView
from rummy_env.rules.base import BatchedGame


def wrap(env: AECEnv) -> AECEnv:
    """PettingZoo's standard wrappers for classic games (an illegal move ends the game, -1),
    with their outermost layer replaced by ``FastOrderEnforcing``, which behaves exactly as
    PettingZoo's ``OrderEnforcingWrapper`` over the same chain but skips the chain on the
    common calls (``tests/test_wrappers_diff.py`` compares the two call by call).
    """
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return FastOrderEnforcing(env)


class FastOrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` over ``TerminateIllegalWrapper(
    AssertOutOfBoundsWrapper(raw))``, with a short path for what a playing loop calls.

    Through PettingZoo's chain every ``last()``, ``observe()``, ``step()`` and ``agent_iter``
    step passes three wrappers, and each attribute they read (``agent_selection``,
    ``terminations``, ...) climbs three ``__getattr__`` levels: 7x the cost of the raw env's
    own work. Here the calls read the raw env directly and do to the chain's state exactly
    what the chain would (``TerminateIllegalWrapper``'s remembered observation,
    ``_has_updated``); ``step`` takes the short path only for a Python ``int`` in range, on
    a live agent, which the mask last observed through this wrapper allows. Every other call
    (illegal moves, out-of-range or odd actions, dead steps, calls before ``reset``) goes
    through PettingZoo's own wrappers, so errors, warnings and rewards are theirs.
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped
        self._til = env.env  # the TerminateIllegalWrapper, whose state the short path keeps
        self._mask_seen: np.ndarray | None = None  # the mask of the observation it remembers

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        """``OrderEnforcingWrapper.observe`` (and ``TerminateIllegalWrapper``'s memory)."""
        if not self._has_reset:
            return super().observe(agent)
        raw, til = self._raw, self._til
        obs = raw.observe(agent)
        if agent == raw.agent_selection:
            til._prev_obs = obs
            infos = raw.infos
            til._prev_info = infos[agent] if agent in infos else {}
            self._mask_seen = obs["action_mask"]
        return obs

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last`` as it runs through the wrappers."""
        if not self._has_reset:
            return super().last(observe)
        raw = self._raw
        agent = raw.agent_selection
        assert agent is not None
        observation = self.observe(agent) if observe else None
        return (
            observation,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def step(self, action: Any) -> None:
        """``OrderEnforcingWrapper.step`` through the chain; see the class docstring."""
        raw, til = self._raw, self._til
        prev = til._prev_obs
        if type(action) is int and type(prev) is dict and self._has_reset and raw.agents:
            mask = prev.get("action_mask")
            agent = raw.agent_selection
            if (
                mask is self._mask_seen
                and mask is not None
                and 0 <= action < raw._num_actions
                and not raw.terminations.get(agent, True)
                and not raw.truncations.get(agent, True)
                and mask[action]
            ):
                # what the three wrappers do for a legal move of a live agent
                self._has_updated = True
                til._prev_obs = None
                til._prev_info = None
                raw.step(action)
                return
        super().step(action)

    def agent_iter(self, max_iter: int = 2**63) -> _FastIterable:
        """``OrderEnforcingWrapper.agent_iter``."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _FastIterable(self, max_iter)

    def __str__(self) -> str:
        """As ``OrderEnforcingWrapper`` names itself: the raw env's name."""
        return str(self.env) if hasattr(self, "metadata") else repr(self)


class _FastIterable(AECOrderEnforcingIterable):
    def __iter__(self) -> _FastIterator:
        return _FastIterator(self.env, self.max_iter)


class _FastIterator(AECOrderEnforcingIterator):
    """``AECOrderEnforcingIterator`` reading the raw env's agents directly."""

    def __next__(self) -> str:
        env = self.env
        raw = env._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        agent = raw.agent_selection
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return agent


class RummyAECEnv(AECEnv):
    """Turn-based AEC env: one game record, one agent acting at a time.

    Subclasses set ``metadata`` and ``config_cls`` / ``game_cls`` (or build ``self.config`` and
    ``self.game``, a batch of one, in their own ``__init__`` and then call ``_init_spaces``);
    they may override ``_hand_info`` and ``render_text``.
    """

    game: BatchedGame
    config: Any
    config_cls: Any = None  # the game's option dataclass (with ``from_kwargs``)
    game_cls: Any = None  # the game's ``BatchedGame`` class

    def __init__(
        self, render_mode: str | None = None, render_view: str | None = None, **options: Any
    ) -> None:
        """Build the options (unknown or bad ones raise ``ValueError``) and a game of one.

        Args:
            render_mode: ``None``, ``"ansi"`` (``render()`` returns the table as text),
                ``"human"`` (prints it) or ``"rgb_array"`` (a picture of the table, an
                (720, 1280, 3) ``uint8`` array).
            render_view: whose view the picture shows: ``None``, the referee's (every card face
                up), or an agent's name (its own hand face up, the others face down but for the
                cards everyone saw them take).
            **options: the game's rule options.
        """
        super().__init__()
        self.config = self.config_cls.from_kwargs(**options)
        self.game = self.game_cls(self.config, 1)
        # the joker games' encoding layout (``rummy_env.encodings.<game>.Layout``); Gin: None
        self.layout: Any = getattr(self.game, "layout", None)
        self._init_spaces(render_mode, render_view)

    def _init_spaces(self, render_mode: str | None, render_view: str | None = None) -> None:
        if render_mode is not None:
            check_choice("render_mode", render_mode, self.metadata["render_modes"])
        self.render_mode = render_mode
        n = self.game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        if render_view is not None:
            check_agent("render_view", render_view, self.possible_agents)
        self.render_view = render_view
        self.agents = self.possible_agents[:]
        self._agent_index = {a: i for i, a in enumerate(self.possible_agents)}
        self._was_reset = False
        self._num_actions = self.game.num_actions
        self._mask_row = self.game.masks[0, : self.game.num_actions]  # a view: the live mask
        self._no_mask = np.zeros(self.game.num_actions, dtype=np.int8)
        self._rewards_of: np.ndarray | None = None  # the records ``_rewards_row`` views
        self._rewards_row = np.zeros(n, dtype=np.float32)
        self._several_tables = self._has_tables()
        low, high = self.game.obs_bounds()
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(low, high, dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(self.game.num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {
            a: spaces.Discrete(self.game.num_actions) for a in self.possible_agents
        }
        self._reset_bookkeeping()

    def observation_space(self, agent: str) -> spaces.Space:
        """Observation space of an agent (unknown names raise ``ValueError``)."""
        return self.observation_spaces[check_agent("agent", agent, self.possible_agents)]

    def action_space(self, agent: str) -> spaces.Space:
        """Action space of an agent (unknown names raise ``ValueError``)."""
        return self.action_spaces[check_agent("agent", agent, self.possible_agents)]

    def action_name(self, action: int) -> str:
        """The name of action id ``action`` (the names of the env's action table, e.g.
        ``DRAW_STOCK`` or ``DISCARD 7H``), for logs, game records and people.

        Raises:
            TypeError: (``ArgumentTypeError``) for an action that is not an integer.
            ValueError: for an id outside ``0 .. num_actions - 1``.
        """
        a = check_int("action", check_action("action", action), 0, self.game.num_actions - 1)
        return self._action_name(a)

    def _action_name(self, a: int) -> str:
        return self.layout.action_name(a)

    def public_action_name(self, action: int) -> str:
        """The name of action id ``action`` as the other players see it: ``action_name``,
        less any card played face down (a Gin knock's discard: ``KNOCK``).

        Raises:
            TypeError: (``ArgumentTypeError``) for an action that is not an integer.
            ValueError: for an id outside ``0 .. num_actions - 1``.
        """
        a = check_int("action", check_action("action", action), 0, self.game.num_actions - 1)
        return self._public_action_name(a)

    def _public_action_name(self, a: int) -> str:
        return self._action_name(a)

    def _has_tables(self) -> bool:
        """Does the game seat its players at several tables (``_table_of`` not None)?"""
        return False

    def _table_of(self, agent: str) -> int | None:
        """The table ``agent`` plays at, where a game has several (4-player Gin), else None."""
        return None

    def _require_reset(self, method: str) -> None:
        """Refuse to play or look at a table that was never dealt."""
        if not self._was_reset:
            raise ResetNeeded(f"call reset() before {method}()")

    @property
    def state_record(self) -> np.void:
        """The full game record (referee's view, hidden cards included) - for tests and tools."""
        return self.game.states[0]

    def _reset_bookkeeping(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._hands_played = 0
        self.last_action: tuple[str, int] | None = None
        self._last_table: int | None = None  # where the last action was played

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new episode; ``options`` may hold ``deck`` (stacked, top first) and ``dealer``.

        Every argument is checked before anything changes (a rejected reset leaves the game,
        its random stream and the agents' bookkeeping as they were).

        Raises:
            TypeError: (``ArgumentTypeError``) for a seed, options, deck or dealer of the wrong
                type (``bool`` is not an integer).
            ValueError: for a negative seed, a dealer that is not a seat, or a deck that is not
                a full deck of this game.
        """
        seed = check_seed("seed", seed)
        options = check_options("options", options)
        deck = options.pop("deck", None)
        dealer = options.pop("dealer", None)
        if dealer is not None:
            self.game.check_dealer("options['dealer']", dealer)
        if deck is not None:
            self.game.check_deck("options['deck']", deck)
        if options:
            # PettingZoo's api_test passes arbitrary options, so unknown ones only warn
            warnings.warn(
                f"ignoring unknown reset option(s) {sorted(options, key=repr)}; valid: deck, "
                "dealer",
                stacklevel=2,
            )
        self.game.reset(seed=seed, dealers=[dealer], decks=[deck], write_obs=False)
        self._reset_bookkeeping()
        self.agent_selection = self.possible_agents[int(self.game.states["cur"][0])]
        self._was_reset = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Observation and action mask of ``agent`` (fresh arrays)."""
        p = self._agent_index.get(agent) if type(agent) is str else None
        if p is None:
            p = self._agent_index[check_agent("agent", agent, self.possible_agents)]
        if not self._was_reset:
            self._require_reset("observe")
        if agent == self.agent_selection:
            mask = self._mask_row.copy()  # all zeros once the episode is over
        else:
            mask = self._no_mask.copy()
        return {"observation": self.game.observe_unchecked(0, p), "action_mask": mask}

    def sample_worlds(
        self, agent: str, n: int, seed: int | np.random.Generator | None = None
    ) -> BatchedGame:
        """``n`` complete game states consistent with everything ``agent`` can see now (hidden
        cards dealt anew), as a batched game of this variant to continue playing from (search,
        rollouts). Never reveals the real hidden cards.

        Raises:
            TypeError: (``ArgumentTypeError``) for an agent that is not a name, an ``n`` that is
                not an integer, or a seed that is not None, an int or a numpy ``Generator``.
            ValueError: for an unknown agent, ``n < 1`` or a negative seed.
        """
        p = self._agent_index[check_agent("agent", agent, self.possible_agents)]
        self._require_reset("sample_worlds")
        return self.game.sample_worlds(0, p, n, seed)

    def step(self, action: int) -> None:
        """Play ``action`` for the agent to act.

        ``action`` is a Python or numpy integer; an agent whose episode is over steps ``None``
        (PettingZoo's dead step).

        Raises:
            TypeError: (``ArgumentTypeError``) for an action that is not an integer (``bool``,
                floats and strings included), or not ``None`` for a finished agent.
            ValueError: for an action that is not legal now (out of range included).
            ResetNeeded: (a RuntimeError and a ValueError) before ``reset()`` and once every
                agent has been removed.
        """
        if not self._was_reset:
            self._require_reset("step")
        agent = self.agent_selection
        if self.terminations.get(agent, True) or self.truncations[agent]:
            if agent not in self.terminations:
                raise ResetNeeded("every agent has left the finished episode; call reset()")
            if action is not None:
                raise ArgumentTypeError(
                    f"action must be None for {agent}, whose episode is over, got {action!r}"
                )
            self._was_dead_step(action)
            return
        a = action if type(action) is int else check_action("action", action)
        if not (0 <= a < self._num_actions and self._mask_row[a]):
            raise ValueError(self.game.explain_illegal(0, a))
        if self._several_tables:
            self._last_table = self._table_of(agent)
        done, trunc, cur, hands = self.game.step_single(0, a)
        states = self.game.states
        if states is not self._rewards_of:  # a view of the record's rewards, made once
            self._rewards_row, self._rewards_of = states["rewards"][0], states
        self.last_action = (agent, a)
        cumulative = self._cumulative_rewards
        cumulative[agent] = 0.0
        own = self.rewards
        # the rewards of the step, then PettingZoo's _accumulate_rewards, in one pass (no agent
        # has left while one still acts, so both dicts hold every agent in seat order)
        for ag, r in zip(self.possible_agents, self._rewards_row.tolist(), strict=True):
            own[ag] = r
            cumulative[ag] += r
        if done or hands > self._hands_played:
            self._hand_over(done, trunc)
        self._hands_played = hands
        self.agent_selection = self.possible_agents[cur]
        if self.render_mode == "human":
            self.render()

    def _hand_over(self, done: bool, trunc: bool) -> None:
        """Record a hand that ended at the last step (the infos; the flags if ``done``)."""
        rec = self.game.states[0]
        for i, ag in enumerate(self.agents):
            self.infos[ag] = self._hand_info(rec, i, bool(done))
        if done:
            for ag in self.agents:
                self.terminations[ag] = not trunc
                self.truncations[ag] = bool(trunc)

    def _after_steps(
        self,
        seat: int,
        action: int,
        cumulative: list[float],
        done: bool,
        trunc: bool,
        hands: int,
        cur: int,
    ) -> None:
        """Bring the bookkeeping up to date after steps played by a compiled loop on the game
        (``rummy_agents.opponent_loop.play_single``), as :meth:`step` leaves it after the last
        of them: ``seat`` played ``action`` last, ``cumulative`` holds every seat's cumulative
        reward, no hand ended before that last step, and ``cur`` is to act.
        """
        states = self.game.states
        if states is not self._rewards_of:
            self._rewards_row, self._rewards_of = states["rewards"][0], states
        self.last_action = (self.possible_agents[seat], action)
        own, cum = self.rewards, self._cumulative_rewards
        for ag, r, c in zip(
            self.possible_agents, self._rewards_row.tolist(), cumulative, strict=True
        ):
            own[ag] = r
            cum[ag] = c
        if done or hands > self._hands_played:
            self._hand_over(done, trunc)
        self._hands_played = hands
        self.agent_selection = self.possible_agents[cur]

    def _hand_info(self, rec: np.void, i: int, done: bool) -> dict[str, Any]:
        """Info of seat ``i`` after a hand (``done``: the episode is over)."""
        return {"hands_played": int(rec["hands_played"])}

    def render_text(self) -> str:
        """The table as text."""
        raise NotImplementedError

    def _table_view(self, rec: np.void, viewer: int | None, names: dict[str, str]) -> TableView:
        raise NotImplementedError

    def table_view(self, view: str | None = None, names: dict[str, str] | None = None) -> TableView:
        """What a picture of the table shows (``rummy_env.render.table.TableView``).

        Args:
            view: ``None`` for the referee's view (every card face up) or an agent's name for
                what that seat sees (the other hands face down, but for the cards everyone saw
                them take).
            names: labels to show for agents (``{"player_1": "greedy"}``), if any.

        Raises:
            ValueError: for an unknown agent name; ``ResetNeeded`` before ``reset()``.
        """
        if view is not None:
            check_agent("view", view, self.possible_agents)
        self._require_reset("table_view")
        labels = {a: f"{a} ({n})" for a, n in (names or {}).items()}
        viewer = None if view is None else self._agent_index[view]
        tv = self._table_view(self.game.states[0], viewer, labels)
        tv.viewer = view or ""
        if self.last_action is not None:
            agent, a = self.last_action
            if view in (None, agent):
                name = self._action_name(a)
            elif self._last_table != self._table_of(view):
                name = "a move at the other table"
            else:
                name = self._public_action_name(a)
            tv.last_action = f"{labels.get(agent, agent)}: {name}"
        return tv

    def render_picture(self, view: str | None = None, fmt: str = "rgb_array") -> Any:
        """A picture of the table: ``fmt="rgb_array"`` an (720, 1280, 3) ``uint8`` array,
        ``fmt="svg"`` an SVG document (``view`` as in ``table_view``).
        """
        from rummy_env.render import picture

        check_choice("fmt", fmt, ("rgb_array", "svg"))
        tv = self.table_view(view)
        return picture.picture(tv) if fmt == "rgb_array" else picture.svg(tv)

    def render(self) -> str | np.ndarray | None:
        """The table: ``ansi`` returns its text, ``human`` prints it, ``rgb_array`` returns a
        picture ((720, 1280, 3) ``uint8``, in the view of ``render_view``).
        """
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode")
            return None
        if self.render_mode == "rgb_array":
            return self.render_picture(self.render_view)
        text = self.render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""
