"""A PettingZoo AEC env over a ``BatchedGame`` of one game (shared by the rummy variants)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

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
    """PettingZoo's standard wrappers for classic games (an illegal move ends the game, -1)."""
    env = wrappers.TerminateIllegalWrapper(env, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


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
        self.layout = getattr(self.game, "layout", None)
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

    def _table_of(self, agent: str) -> int | None:
        """The table ``agent`` plays at, where a game has several (4-player Gin), else None."""
        return None

    def _require_reset(self, method: str) -> None:
        """Refuse to play or look at a table that was never dealt."""
        if getattr(self, "agent_selection", None) is None:
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

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """Observation and action mask of ``agent`` (fresh arrays)."""
        p = self._agent_index[check_agent("agent", agent, self.possible_agents)]
        self._require_reset("observe")
        if agent == self.agent_selection:
            mask = self.game.action_mask(0)  # all zeros once the episode is over
        else:
            mask = np.zeros(self.game.num_actions, dtype=np.int8)
        return {"observation": self.game.observe(0, p), "action_mask": mask}

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

    def _step_game(self, a: int) -> tuple[bool, bool, int, int, np.ndarray]:
        """Apply a legal action; returns (done, truncated, to act, hands played, rewards)."""
        done, trunc, cur, hands = self.game.step_single(0, a)
        return done, trunc, cur, hands, self.game.states["rewards"][0]

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
        self._require_reset("step")
        agent = self.agent_selection
        if agent not in self.terminations:
            raise ResetNeeded("every agent has left the finished episode; call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ArgumentTypeError(
                    f"action must be None for {agent}, whose episode is over, got {action!r}"
                )
            self._was_dead_step(action)
            return
        a = check_action("action", action)
        if not self.game.is_legal(0, a):
            raise ValueError(self.game.explain_illegal(0, a))
        self._last_table = self._table_of(agent)
        done, trunc, cur, hands, rewards = self._step_game(a)
        self.last_action = (agent, a)
        self._cumulative_rewards[agent] = 0.0
        for i, ag in enumerate(self.possible_agents):
            self.rewards[ag] = float(rewards[i])
        if done or hands > self._hands_played:
            rec = self.game.states[0]
            for i, ag in enumerate(self.agents):
                self.infos[ag] = self._hand_info(rec, i, bool(done))
            if done:
                for ag in self.agents:
                    self.terminations[ag] = not trunc
                    self.truncations[ag] = bool(trunc)
        self._hands_played = hands
        self.agent_selection = self.possible_agents[int(cur)]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

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
