"""Gymnasium vector env of the single-agent view: N games, one learner seat each, stepped by
the batched core.

:class:`RummySingleAgentVectorEnv` is what ``gymnasium.make_vec("rummy/GinRummy-v0", num_envs=N)``
returns: a native :class:`gymnasium.vector.VectorEnv` (not N single envs in a
``SyncVectorEnv``). Every step applies the learner's N actions in one compiled call of the
core, then plays the opponents' decisions up to each game's next learner decision, one compiled
call per round of opponent moves over exactly the games that need one (a gathered batch,
``BatchedGame.step_rows``). Each step is one decision of the learner in every game, as in
:class:`~rummy_env.wrappers.RummySingleAgentEnv`, whose options it mirrors.

Autoreset: ``AutoresetMode.SAME_STEP``. The core resets a finished game inside the same
compiled call, so the observation returned for a game whose episode just ended is already the
first learner decision of the next episode, with a legal action (a masked policy never samples
from an empty mask); the finished episode's last observation is ``info["final_obs"]`` and its
results ``info["final_info"]`` (rows where ``info["_final_obs"]``). This is what SB3's VecEnv
does; Gymnasium's ``RecordEpisodeStatistics`` counts it right from Gymnasium 1.4.

Opponents (one spec for every opponent seat, or one per opponent seat, in seat order skipping
the learner, as in ``RummySingleAgentEnv``):

- ``None``: uniformly random legal actions, drawn for all games at once from per-game streams;
- an agent with ``act_game(game, rows)`` (``rummy_agents`` ``heuristic``: compiled over the
  batch) or ``act_batch`` (``act_batch(observations, masks)`` or ``act_batch(masks)``): one
  agent acts for the rows of every game whose opponent seat it holds, in one call (batch agents
  must not keep per-game state; the suite's do not). Not in 3- and 4-player Gin Rummy, whose
  seats play 2-player hands: there every agent acts one game at a time. A batch agent that
  offers ``compiled_policy`` (Gin's rule agents) plays inside the compiled loop, drawing its
  ties from a copy of its ``PCG64`` generator's state: the same draws, and the generator is
  put in that state again after every step for an agent you pass, before anything else draws
  from it for one the env builds;
- any other agent (``act(observation, view)``), callable ``policy(observation, view)``, or a
  factory (``build(seed)``) of such agents: one call per game that needs a move, with the
  seat's :class:`~rummy_env.envs.view.SeatView` of that game. A factory builds a fresh agent for
  each seat of each game at the start of every episode, seeded from the game's stream.

Seeding: ``reset(seed=s)`` seeds game ``i`` with ``s + i``: its deal is the one the AEC env deals
with seed ``s + i``, and everything the env draws for it (learner seat, random opponents'
moves, seeds of agents built per game, replacements of illegal learner actions) comes from a
stream of its own, so with random or per-game opponents game ``i`` plays exactly as game 0 of
a one-game env reset with seed ``s + i``. Batch agents are built once per reset, seeded from
``s``: the whole batch is still reproducible.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from rummy_env.core import rng as _rng
from rummy_env.core.learner import advance_rows, copy_masks, mark_illegal
from rummy_env.core.validate import (
    MAX_GAMES,
    ArgumentTypeError,
    ResetNeeded,
    check_actions,
    check_choice,
    check_int,
    check_list,
    check_options,
    check_seed,
)
from rummy_env.envs.view import SeatView
from rummy_env.games import GAMES
from rummy_env.rules.base import PARALLEL_MIN_BATCH, WARMUP_CALLS, FastestStep
from rummy_env.wrappers.single_agent import (
    ILLEGAL_ACTIONS,
    AgentFactory,
    ObservationFeatures,
    OpponentLike,
    _check_opponent,
    _common_policy,
    _Policy,
)

# which side stream (``core.rng.side_states``) this env draws from, apart from the games' own
_STREAM = 1

RANDOM, GAME, BATCH, SEAT = "random", "game", "batch", "seat"
"""How an opponent slot plays: random in numpy, ``act_game``, ``act_batch``, one game at a time."""

POOL = 3
"""Buffers of each kind (observations, final observations) a step may hand out again."""

MASK_POOL = 4
"""Mask buffers a step may hand out again (two a step: the info's and the next
``action_masks()``'s)."""


def _refs(pool: list[np.ndarray], k: int) -> int:
    return sys.getrefcount(pool[k])


_UNHELD = _refs([np.empty(0)], 0)
"""``_refs`` of an array only its pool holds (measured: interpreters count differently)."""


def _unheld(pool: list[np.ndarray]) -> int:
    """The first buffer of ``pool`` that nothing but the pool references (no user variable,
    view, ``info`` dict or tensor sharing its memory: each holds a reference), or -1.
    """
    for k in range(len(pool)):
        if _refs(pool, k) == _UNHELD:
            return k
    return -1


def _pooled(pool: list[np.ndarray], size: int, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A buffer of ``pool`` that nothing else references (``_unheld``), else a new empty one,
    kept in the pool while it holds fewer than ``size``.
    """
    k = _unheld(pool)
    if k >= 0:
        return pool[k]
    buf = np.empty(shape, dtype=dtype)
    if len(pool) < size:
        pool.append(buf)
    return buf


class _GameSlot:
    """Game ``i`` of the batch, with the helpers a :class:`SeatView` reads from an AEC env."""

    def __init__(self, env: RummySingleAgentVectorEnv, i: int) -> None:
        self.game = env.game
        self.game_index = i
        self.config = env.config
        self.possible_agents = env.possible_agents
        self.metadata = {"name": env.game_name}

    @property
    def unwrapped(self) -> _GameSlot:
        """Itself (a ``SeatView`` reads ``env.unwrapped``)."""
        return self

    def _require_reset(self, method: str) -> None:
        """Always dealt: the vector env creates views only while its games run."""

    def sample_worlds(
        self, agent: str, n: int, seed: int | np.random.Generator | None = None
    ) -> Any:
        """``n`` full states consistent with what ``agent`` knows in this game."""
        return self.game.sample_worlds(self.game_index, self.possible_agents.index(agent), n, seed)


def _batch_call(agent: Any) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``f(observations, masks) -> actions`` for an agent's ``act_batch`` (which takes the
    observations and masks, or the masks only: ``RandomAgent``).
    """
    fn = agent.act_batch
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):  # builtins without a signature: assume (obs, masks)
        params = ["observations"]
    if params and params[0] in ("observations", "obs", "observation"):
        return lambda o, m: fn(o, m)
    return lambda o, m: fn(m)


class RummySingleAgentVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games of one learner seat against opponents, as a Gymnasium vector env.

    Observations are (N, O) ``float32`` learner observations (with ``features`` appended),
    actions (N,) action ids, rewards (N,) ``float64`` learner rewards summed over the learner's
    decision and the opponents' decisions up to its next one; ``action_masks()`` is (N, A)
    ``bool``, and so is ``info["action_mask"]`` (the same masks, which reach a loop through
    any vector wrapper: Gymnasium's do not forward other methods, ``env.unwrapped.action_masks()``
    does). ``info["learner_seat"]`` is every game's learner seat now and
    ``info["illegal_action"]`` where an illegal learner action was replaced (see
    ``illegal_action``); for the games whose episode ended, ``info["final_obs"]`` and
    ``info["final_info"]`` (the engine's results: ``final_points``, ``outcome``,
    ``episode_length`` ... and the episode's ``learner_seat``) with masks ``_final_obs`` and
    ``_final_info``. See the module docstring for autoreset, opponents and seeding.

    Args:
        game: game name (``"gin_rummy"``, ``"five_hundred_rum"``, ``"rummy51"``).
        num_envs: number of games, 1 .. 2**24.
        opponents: one opponent spec for every opponent seat, or a sequence of one per
            opponent seat (seat order, the learner's skipped): ``None`` (random legal moves),
            an agent, a callable ``policy(observation, view)`` or an agent factory
            (``build(seed)``); agents are looked up by name on the agents side
            (``gymnasium.make_vec("rummy/GinRummy-v0", opponent="simple")`` does it).
        learner_seat: the learner's seat in every game, or ``None``: drawn per game at the start
            of every episode.
        features: extra observation entries (``size`` and ``features(obs)`` for (N, O)
            batches, such as ``rummy_agents.features.FeatureSet``), or ``None``.
        illegal_action: ``"random"``: an illegal learner action (``action_space.sample()``
            picks them) is replaced by a random legal one, flagged in ``info["illegal_action"]``;
            ``"raise"``: ``ValueError`` before any game moves.
        render_mode: only ``None`` (render one game with ``RummySingleAgentEnv``).
        **options: the game's rule options (``num_players=3``, ``target=...``).

    Raises:
        TypeError: (``ArgumentTypeError``) for an argument of the wrong type.
        ValueError: for an unknown game or rule option, a bad value, or a wrong number of
            opponents, naming the argument, the value and what is allowed.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        game: str = "gin_rummy",
        num_envs: int = 8,
        opponents: OpponentLike | Sequence[OpponentLike] = None,
        learner_seat: int | None = None,
        features: ObservationFeatures | None = None,
        illegal_action: str = "random",
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        check_choice("game", game, tuple(GAMES))
        num_envs = check_int("num_envs", num_envs, 1, MAX_GAMES)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        if render_mode is not None:
            raise ValueError(
                f"render_mode must be None for the vector env (render a game with "
                f"RummySingleAgentEnv), got {render_mode!r}"
            )
        if features is not None and not isinstance(features, ObservationFeatures):
            raise ArgumentTypeError(
                f"features must have size and __call__(obs) (rummy_agents.features.FeatureSet) "
                f"or be None, got {type(features).__name__} {features!r}"
            )
        config_cls, engine = GAMES[game]
        config = config_cls.from_kwargs(**options)
        n_players = int(config.num_players)
        n_opp = n_players - 1
        if isinstance(opponents, (str, bytes)) or not isinstance(opponents, Sequence):
            opponents = [opponents] * n_opp
        if len(opponents) != n_opp:
            raise ValueError(
                f"opponents must be one spec or one per opponent seat ({n_opp}), "
                f"got {len(opponents)}"
            )
        for k, opp in enumerate(opponents):
            _check_opponent(k, opp)
        if learner_seat is not None:
            learner_seat = check_int("learner_seat", learner_seat, 0, n_players - 1)

        self.game_name = game
        self.config = config
        self.game = engine(config, num_envs)
        self.num_envs = num_envs
        self.num_players = n_players
        self.possible_agents = [f"player_{q}" for q in range(n_players)]
        self.fixed_seat = learner_seat
        self.features = features
        self.illegal_action = illegal_action
        self.render_mode = None
        self.num_actions = a_n = int(self.game.num_actions)
        self.tables = game == "gin_rummy" and n_players > 2
        low, high = self.game.obs_bounds()
        extra = 0 if features is None else int(features.size)
        self.single_observation_space = spaces.Box(
            np.concatenate([low, np.full(extra, -np.inf, np.float32)]),
            np.concatenate([high, np.full(extra, np.inf, np.float32)]),
            dtype=np.float32,
        )
        self.single_action_space = spaces.Discrete(a_n)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)

        self._specs = list(opponents)
        self._kinds: list[str] = []
        self._shared: list[Any] = []  # per slot: the agent acting for every game (or None)
        for spec in self._specs:
            kind, agent = self._plan(spec, seed=0)
            self._kinds.append(kind)
            self._shared.append(agent)
        self._batch_fns = [
            _batch_call(a) if k == BATCH else None
            for k, a in zip(self._kinds, self._shared, strict=True)
        ]
        n = num_envs
        self._rows = np.arange(n)
        self._seat = np.zeros(n, dtype=np.int64)
        self._acted = np.zeros(n, dtype=bool)
        self._obs = np.zeros((n, self.game.obs_size), dtype=np.float32)
        # the big per-step arrays are taken again once the user has dropped them: a fresh
        # multi-megabyte array per step costs page faults whenever the last one is still held
        # (a Rummy 51 step of 256 games: ~400 faults, a sixth of its time)
        self._obs_pool: list[np.ndarray] = []
        self._final_pool: list[np.ndarray] = []
        self._final_rows: list[tuple[np.ndarray, ...]] = []  # the rows its last use wrote
        self._mask_pool: list[np.ndarray] = []
        # the masks of the last step copied for the next ``action_masks()`` in the same pass
        # as ``info["action_mask"]`` (None: taken, or the masks changed since)
        self._next_masks: np.ndarray | None = None
        self._streams = _rng.side_states(None, n, _STREAM)
        self._agents: list[dict[int, Any]] = [{} for _ in range(n)]  # per-game built agents
        self._built = [
            k
            for k, (kind, spec) in enumerate(zip(self._kinds, self._specs, strict=True))
            if kind == SEAT and isinstance(spec, AgentFactory)
        ]
        self._round_rows = np.zeros(n, dtype=np.int64)  # a round of the compiled opponents
        self._round_acts = np.zeros(n, dtype=np.int64)
        self._shared_run: Any = None  # the timed choice of threaded or serial shared loop
        # the generator state the compiled shared loop draws from (a numpy generator costs
        # ~9 us a call to pass), and the compiled policy whose agent's generator it is ahead
        # of (None: none)
        self._ties = np.zeros(6, dtype=np.uint64)
        self._ties_of: Any = None
        self._ties_own = isinstance(self._specs[0], AgentFactory) if n_opp == 1 else False
        self._per_game = self._per_game_policy()
        if self._per_game is not None:  # the agents' generators, one per game and seat
            self._gens = np.zeros((n, n_opp, 6), dtype=np.uint64)
            cp = self._per_game
            self._per_game_run = (
                FastestStep([cp.per_game_parallel, cp.per_game], warmup=WARMUP_CALLS)
                if n >= PARALLEL_MIN_BATCH
                else cp.per_game
            )
        self._views: dict[tuple[int, int], SeatView] = {}
        self._needs_reset = True

    # -- opponents ----------------------------------------------------------------------------
    def _plan(self, spec: Any, seed: int) -> tuple[str, Any]:
        """How a slot's spec plays, and the agent that plays every game (batch kinds)."""
        if spec is None:
            return RANDOM, None
        agent = spec.build(seed) if isinstance(spec, AgentFactory) else spec
        if not self.tables and hasattr(agent, "act_game"):
            return GAME, agent
        if not self.tables and hasattr(agent, "act_batch"):
            return BATCH, agent
        if isinstance(spec, AgentFactory):
            return SEAT, None  # built per game and episode (_new_episode)
        return SEAT, agent if hasattr(agent, "act") else _Policy(agent)

    def _slot(self, rows: np.ndarray, cur: np.ndarray) -> np.ndarray:
        """Opponent slot (index into the opponent specs) of seat ``cur`` in games ``rows``."""
        return cur - (cur > self._seat[rows])

    def _view(self, i: int, q: int) -> SeatView:
        key = (i, q)
        view = self._views.get(key)
        if view is None:
            view = self._views[key] = SeatView(_GameSlot(self, i), self.possible_agents[q])
        return view

    def _opponent_actions(self, rows: np.ndarray, cur: np.ndarray) -> np.ndarray:
        """Actions of the opponents to act (seats ``cur``) in games ``rows``."""
        self._sync_ties()
        a_n = self.num_actions
        out = np.empty(rows.size, dtype=np.int64)
        slots = self._slot(rows, cur)
        for k in np.unique(slots):
            sel = np.flatnonzero(slots == k)
            sub = rows[sel]
            kind = self._kinds[k]
            if kind == RANDOM:
                masks = self.game.masks[sub, :a_n] == 1
                out[sel] = self._random_legal(sub, masks)
            elif kind == GAME:
                out[sel] = np.asarray(self._shared[k].act_game(self.game, sub))
            elif kind == BATCH:
                fn = self._batch_fns[k]
                out[sel] = np.asarray(fn(self._obs[sub], self.game.masks[sub, :a_n]))
            else:
                for j, i, q in zip(sel, sub, cur[sel], strict=True):
                    agent = self._shared[k]
                    if agent is None:
                        agent = self._agents[i][q]
                    ob = {"observation": self._obs[i].copy(),
                          "action_mask": self.game.masks[i, :a_n].copy()}  # fmt: skip
                    out[j] = int(agent.act(ob, self._view(int(i), int(q))))
        legal = (out >= 0) & (out < a_n)
        legal[legal] = self.game.masks[rows[legal], out[legal]] == 1
        if not legal.all():
            bad = int(np.flatnonzero(~legal)[0])
            raise self._illegal(int(rows[bad]), int(slots[bad]), int(out[bad]))
        return out

    def _illegal(self, i: int, k: int, a: int) -> RuntimeError:
        """The error for opponent slot ``k``'s illegal action ``a`` in game ``i``."""
        why = (
            self.game.explain_illegal(i, a)
            if 0 <= a < self.num_actions
            else f"action {a} is out of range 0..{self.num_actions - 1}"
        )
        return RuntimeError(
            f"opponent {k} ({self._specs[k]!r}) chose illegal action {a} in game {i}: {why}"
        )

    def _random_legal(self, rows: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """A uniformly random legal action per row of bool ``masks``, from the games' streams."""
        k = _rng.randint_rows(self._streams, rows, _rng.legal_counts(masks))
        return _rng.nth_legal(masks, k)

    def _new_episode(self, rows: np.ndarray) -> None:
        """A new episode started in games ``rows``: draw the learner seat, build the agents of
        factories played one game at a time, and wait for the learner's first decision.
        """
        if rows.size == 0:
            return
        if self.fixed_seat is None:
            self._seat[rows] = _rng.randint_rows(self._streams, rows, self.num_players)
        else:
            self._seat[rows] = self.fixed_seat
        self._acted[rows] = False
        self._build_agents(rows)

    def _build_agents(self, rows: np.ndarray) -> None:
        """Build the agents of factories played one game at a time for the episodes that
        games ``rows`` start (their learner seats drawn), seeded from the games' streams.
        """
        if not self._built or rows.size == 0:
            return
        if self._per_game is not None:  # the compiled agents' generators, seeded alike
            self._per_game.seed_rows(self._streams, rows, self._gens)
            return
        seeds = (_rng.next_u64_rows(self._streams, rows) >> np.uint64(33)).astype(np.int64)
        for i, s in zip(rows.tolist(), seeds.tolist(), strict=True):
            others = [q for q in range(self.num_players) if q != self._seat[i]]
            agents = self._agents[i]
            agents.clear()
            for k in self._built:
                agents[others[k]] = self._specs[k].build(s + k)

    # -- stepping -----------------------------------------------------------------------------
    def _fixed(self) -> int:
        return -1 if self.fixed_seat is None else int(self.fixed_seat)

    def _advance(
        self, rows: np.ndarray, actions: np.ndarray, rewards: np.ndarray, ends: dict[str, Any]
    ) -> None:
        """One compiled call over games ``rows`` (``core.learner.advance_rows``): adds the
        learner's rewards of the episodes it plays to ``rewards``, records in ``ends`` the
        learner episodes that end, and builds the agents of the episodes dealt anew.
        """
        g = self.game
        started = ends["started"]
        advance_rows(
            g.states, g.cfg, g.tables, g.masks, self._obs, rows, actions, self._seat,
            self._acted, self._streams, self._fixed(), rewards, ends["term"], ends["trunc"],
            ends["final_obs"], ends["final_info"], ends["final_seat"], started,
        )  # fmt: skip
        if self._built:
            new = rows[started[rows]]
            started[new] = False
            self._build_agents(new)

    def _per_game_policy(self) -> Any:
        """The compiled policy of opponents built per game and episode (factories whose agents
        offer ``compiled_policy``, the same for every seat), played inside
        ``rummy_agents.opponent_loop.play_per_game``; or None.
        """
        if len(self._built) != len(self._specs):
            return None
        self._templates = [spec.build(0) for spec in self._specs]  # the reference's moves
        return _common_policy(self._templates, self.game)

    def _shared_policy(self) -> Any:
        """The compiled policy of one agent playing every game (``compiled_policy`` of the
        ``act_batch`` agent of the one opponent slot), played inside
        ``rummy_agents.opponent_loop.play_shared``; or None. Asked at every step: the agent's
        options are read at each call, as ``act_batch`` reads them.
        """
        if len(self._kinds) != 1 or self._kinds[0] != BATCH:
            return None
        offer = getattr(self._shared[0], "compiled_policy", None)
        return None if offer is None else offer(self.game)

    def _play(self, actions: np.ndarray | None, rewards: np.ndarray, ends: dict[str, Any]) -> None:
        """Apply the learner's ``actions`` (if any), then let the opponents move until the
        learner is to act in every game.

        Opponents whose agents offer ``compiled_policy`` play inside one compiled call of
        ``rummy_agents.opponent_loop`` (the same moves and draws as the Python loop below),
        which returns when done, or with a move left to the Python reference or an illegal
        move: the reference decides it here, and the loop goes on.
        """
        per_game = self._per_game
        shared = None if per_game is not None else self._shared_policy()
        if per_game is not None:
            self._play_per_game(per_game, actions, rewards, ends)
        elif shared is not None:
            self._play_shared(shared, actions, rewards, ends)
        else:
            if actions is not None:
                self._advance(self._rows, actions, rewards, ends)
            self._play_opponents(rewards, ends)

    def _loop_args(
        self, rewards: np.ndarray, ends: dict[str, Any]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        g = self.game
        return (
            g.states, g.cfg, g.tables, g.masks, self._obs, self.num_actions, self._seat,
            self._acted, self._streams, self._fixed(),
        ), (
            rewards, ends["term"], ends["trunc"], ends["final_obs"], ends["final_info"],
            ends["final_seat"], ends["started"],
        )  # fmt: skip

    def _play_shared(
        self, cp: Any, actions: np.ndarray | None, rewards: np.ndarray, ends: dict[str, Any]
    ) -> None:
        """``play_shared``: rounds as :meth:`_play_opponents` plays them; a round's rows from
        the first one the compiled decision leaves to the reference on are decided by
        ``act_batch`` here (status 1), an illegal move raises (2).
        """
        head, tail = self._loop_args(rewards, ends)
        learner = actions is not None
        a = actions if learner else self._round_acts
        rows_buf, acts_buf = self._round_rows, self._round_acts
        run = cp.shared
        if cp.shared_parallel is not None and self.num_envs >= PARALLEL_MIN_BATCH:
            pair = (cp.shared_parallel, cp.shared)
            if self._shared_run is None or tuple(self._shared_run.kernels) != pair:
                self._shared_run = FastestStep(list(pair), warmup=WARMUP_CALLS)
            run = self._shared_run
        while True:
            ties = self._ties_for(cp)  # (after a reference move: the generator's state)
            try:
                status, k, j = run(*head, learner, a, *tail, cp.params, ties, rows_buf, acts_buf)
            finally:
                if not self._ties_own:  # the user's agent: its generator kept current
                    self._sync_ties()
            if status == 0:
                return
            learner = False
            if j < 0:  # pragma: no cover - no game lets one side move for ever
                raise RuntimeError("the opponents never gave the learner a move")
            rows = rows_buf[:k].copy()
            acts = acts_buf[:k].copy()
            if status == 2:
                raise self._illegal(int(rows[j]), 0, int(acts[j]))
            cur = self.game.states["cur"][rows[j:]].astype(np.int64)
            acts[j:] = self._opponent_actions(rows[j:], cur)
            self._advance(rows, acts, rewards, ends)

    def _ties_for(self, cp: Any) -> Any:
        """What the compiled shared loop of ``cp`` draws its ties from: a state array holding
        the state of its agent's generator (loaded once while the env's own agent plays
        compiled, then kept ahead of it until :meth:`_sync_ties`), or the generator itself if
        it is not a ``PCG64`` one.
        """
        if self._ties_of is not None and self._ties_of.agent is cp.agent:
            return self._ties
        self._sync_ties()
        if not cp.read_rng(cp.agent, self._ties):
            return cp.agent.rng
        self._ties_of = cp
        return self._ties

    def _sync_ties(self) -> None:
        """Put the generator the state array is ahead of in the array's state, before anything
        else draws from it (``act_batch``) or the user may read it.
        """
        held = self._ties_of
        if held is not None:
            held.write_rng(held.agent, self._ties)
            self._ties_of = None

    def _play_per_game(
        self, cp: Any, actions: np.ndarray | None, rewards: np.ndarray, ends: dict[str, Any]
    ) -> None:
        """``play_per_game``: game after game; a move the compiled decision leaves to the
        reference (status 1) is the seat's agent's ``act`` here, with the game's generator.
        """
        head, tail = self._loop_args(rewards, ends)
        n = self.num_envs
        a = self._round_acts if actions is None else actions
        learner_from = n if actions is None else 0
        status, i, slot, act = self._per_game_run(
            *head, learner_from, a, *tail, cp.params, self._gens, 0
        )
        while status != 0:
            if status == 2:
                raise self._illegal(i, slot, act)
            act = self._reference_move(cp, i, slot)
            self._advance(np.array([i], np.int64), np.array([act], np.int64), rewards, ends)
            status, i, slot, act = cp.per_game(*head, n, a, *tail, cp.params, self._gens, i)

    def _reference_move(self, cp: Any, i: int, slot: int) -> int:
        """The move of opponent ``slot`` in game ``i`` by its agent's ``act`` (with the game's
        generator for that seat, whose state it then takes back).
        """
        agent = self._templates[slot]
        q = int(self.game.states["cur"][i])
        agent.rng = cp.to_generator(self._gens[i, slot])
        ob = {
            # written here: the loop writes row i for the learner only when the compiled
            # policy reads the game record (``policy_reads_rec``)
            "observation": self.game.observe_unchecked(i, q),
            "action_mask": self.game.masks[i, : self.num_actions].copy(),
        }
        a = int(agent.act(ob, self._view(i, q)))
        cp.state_of(agent.rng, self._gens[i, slot])
        if not (0 <= a < self.num_actions and self.game.masks[i, a] == 1):
            raise self._illegal(i, slot, a)
        return a

    def _play_opponents(self, rewards: np.ndarray, ends: dict[str, Any]) -> None:
        """Opponents move, round after round, until the learner is to act in every game."""
        for _ in range(1_000_000):
            cur = self.game.states["cur"].astype(np.int64)
            rows = np.flatnonzero(cur != self._seat)
            if rows.size == 0:
                return
            self._advance(rows, self._opponent_actions(rows, cur[rows]), rewards, ends)
        raise RuntimeError("the opponents never gave the learner a move")  # pragma: no cover

    def _new_ends(self) -> dict[str, Any]:
        n = self.num_envs
        term = np.zeros(n, dtype=bool)
        trunc = np.zeros(n, dtype=bool)
        return {
            "term": term,
            "trunc": trunc,
            "final_obs": self._final_obs(term, trunc),
            "final_info": np.zeros((n, len(self.game.final_fields)), dtype=np.int64),
            "final_seat": np.zeros(n, dtype=np.int64),
            "started": np.zeros(n, dtype=bool),
        }

    def _learner_obs(self, obs: np.ndarray) -> np.ndarray:
        return obs.copy() if self.features is None else self.features(obs)

    # -- Gymnasium API ------------------------------------------------------------------------
    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new episode in every game and play the opponents up to each learner's first
        decision. Game ``i`` is seeded with ``seed + i`` (``seed`` may also be a list of
        ``num_envs`` seeds; ``None``: fresh entropy on the first reset, else the games' streams
        go on).

        ``options`` may hold ``learner_seat`` (a seat for the episodes this reset deals, or
        ``None``: drawn), ``decks`` and ``dealers`` (one stacked deck / first dealer or ``None``
        per game, see ``rummy_env.make_vec``). Everything is checked before anything changes.

        Raises:
            TypeError: (``ArgumentTypeError``) for an argument of the wrong type.
            ValueError: for a bad value or an unknown option, naming it.
        """
        n = self.num_envs
        seed = check_seed("seed", seed, n)
        options = check_options("options", options)
        seat = options.pop("learner_seat", self.fixed_seat)
        decks = options.pop("decks", None)
        dealers = options.pop("dealers", None)
        if options:
            raise ValueError(
                f"unknown reset option(s) {sorted(options, key=repr)}; valid: learner_seat, "
                "decks, dealers"
            )
        if seat is not None:
            seat = check_int("options['learner_seat']", seat, 0, self.num_players - 1)
        if dealers is not None:
            for i, d in enumerate(check_list("options['dealers']", dealers, n)):
                if d is not None:
                    self.game.check_dealer(f"options['dealers'][{i}]", d)
        if decks is not None:
            for i, deck in enumerate(check_list("options['decks']", decks, n)):
                if deck is not None:
                    self.game.check_deck(f"options['decks'][{i}]", deck)
        # everything is valid: only now change state
        self._next_masks = None
        if seed is not None or self._needs_reset:
            self._streams = _rng.side_states(seed, n, _STREAM)
            if isinstance(seed, int):
                super().reset(seed=seed)  # np_random, for code that reads it
            rng = np.random.default_rng(seed)  # seeds of the agents acting for every game
            self._sync_ties()
            self._shared = [
                self._plan(spec, int(rng.integers(2**31 - 1)))[1] for spec in self._specs
            ]
            self._batch_fns = [
                _batch_call(a) if k == BATCH else None
                for k, a in zip(self._kinds, self._shared, strict=True)
            ]
        self._obs = self.game.reset(seed=seed, dealers=dealers, decks=decks)
        self._needs_reset = False
        fixed, self.fixed_seat = self.fixed_seat, seat
        try:
            self._new_episode(self._rows)
        finally:
            self.fixed_seat = fixed
        rewards = np.zeros(n)
        ends = self._new_ends()
        self._play(None, rewards, ends)  # a finished sat-out episode is dealt again
        info = {"learner_seat": self._seat.copy(), "action_mask": self.action_masks()}
        return self._learner_obs(self._obs), info

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner decision in every game, then the opponents' up to its next one.

        Args:
            actions: (N,) integer action ids (a list or array).

        Raises:
            ResetNeeded: (a RuntimeError and a ValueError) before ``reset()``.
            TypeError: (``ArgumentTypeError``) for actions that are not integers.
            ValueError: for another shape, or (``illegal_action="raise"``) an illegal action,
                naming the first such game; before any game moves.
        """
        if self._needs_reset:
            raise ResetNeeded("call reset() before step()")
        n, a_n = self.num_envs, self.num_actions
        a = check_actions("actions", actions, n).astype(np.int64)
        illegal = np.empty(n, dtype=bool)
        i = mark_illegal(self.game.masks, a, a_n, illegal)
        if i >= 0:
            if self.illegal_action == "raise":
                why = (
                    self.game.explain_illegal(i, int(a[i]))
                    if 0 <= a[i] < a_n
                    else f"action {int(a[i])} is out of range 0..{a_n - 1}"
                )
                raise ValueError(
                    f"actions[{i}] is illegal: {why} (illegal_action='raise'; legal actions: "
                    f"np.flatnonzero(env.action_masks()[{i}]))"
                )
            rows = np.flatnonzero(illegal)
            a[rows] = self._random_legal(rows, self.game.masks[rows, :a_n] == 1)
        rewards = np.zeros(n)
        ends = self._new_ends()
        self._next_masks = None
        self._acted[:] = True
        # the learner moves in every game, so the step writes every row of the observations:
        # into a fresh array, handed to the user as it is (a copy cost a 256-game step of a
        # joker game 10% of its time); nothing the user keeps is written again
        self._obs = self._fresh_obs()
        try:
            self._play(a, rewards, ends)
        except BaseException:
            self._observe_all()  # the rows of the games the failed step did not reach
            raise
        info: dict[str, Any] = {
            "learner_seat": self._seat.copy(),
            "action_mask": self._step_masks(),
            "illegal_action": illegal,
        }
        done = ends["term"] | ends["trunc"]
        self._final_written(ends["final_obs"], done)
        if done.any():
            fo = ends["final_obs"]  # made for this step: the user's own without a copy
            info["final_obs"] = fo if self.features is None else self.features(fo)
            info["_final_obs"] = done
            final: dict[str, Any] = {"learner_seat": ends["final_seat"]}
            self.game._final_info(final, ends["final_info"])
            info["final_info"] = final
            info["_final_info"] = done.copy()
        obs = self._obs if self.features is None else self.features(self._obs)
        return obs, rewards, ends["term"], ends["trunc"], info

    def _fresh_obs(self) -> np.ndarray:
        """An observation buffer for a step, which writes all of it: one handed out before
        that nothing references any more (not ``self._obs``, which the env holds), else a new
        one.
        """
        return _pooled(self._obs_pool, POOL, self._obs.shape, self._obs.dtype)

    def _final_obs(self, term: np.ndarray, trunc: np.ndarray) -> np.ndarray:
        """A zero (N, O) buffer for the final observations of the episodes that end in a step,
        whose ``term`` and ``trunc`` mark the rows it writes (until :meth:`_final_written`
        keeps them apart from the arrays handed to the user): one handed out before that
        nothing references any more (the rows it had zeroed again), else a new one.
        """
        pool, rows = self._final_pool, self._final_rows
        k = _unheld(pool)
        if k >= 0:
            for written in rows[k]:
                pool[k][written] = 0.0
            rows[k] = (term, trunc)
            return pool[k]
        buf = np.zeros((self.num_envs, self.game.obs_size), dtype=np.float32)
        if len(pool) < POOL:
            pool.append(buf)
            rows.append((term, trunc))
        return buf

    def _final_written(self, buf: np.ndarray, done: np.ndarray) -> None:
        """Record the rows ``done`` of final observations buffer ``buf`` as the ones to zero
        again (the step's ``term`` and ``trunc`` go to the user, who may change them).
        """
        for k, b in enumerate(self._final_pool):
            if b is buf:
                self._final_rows[k] = (done.nonzero()[0],)  # (flatnonzero: 3 us more)

    def _observe_all(self) -> None:
        """Write every game's observation of its player to act into ``self._obs``."""
        cur = self.game.states["cur"]
        for i in range(self.num_envs):
            self._obs[i] = self.game.observe_unchecked(i, int(cur[i]))

    def action_masks(self) -> np.ndarray:
        """(N, A) bool masks of the learner's legal actions (a fresh array).

        Raises:
            ResetNeeded: before ``reset()``.
        """
        if self._needs_reset:
            raise ResetNeeded("call reset() before action_masks()")
        ready, self._next_masks = self._next_masks, None
        if ready is not None:  # copied by the last step, and nothing else holds it
            return ready
        # the masks hold the bytes 0 and 1: their bool view copied is the comparison with 1,
        # at half its time
        return self.game.masks[:, : self.num_actions].view(np.bool_).copy()

    def _step_masks(self) -> np.ndarray:
        """The masks for a step's ``info["action_mask"]``, copied in the same pass into a
        second buffer that the next :meth:`action_masks` hands out (a training loop asks for
        both: at 256 x 3,188 the two copies took 6% of a Rummy 51 step on two threads). Both
        are pool buffers nothing else references, as the observations are.
        """
        first, second = self._fresh_masks(), self._fresh_masks()
        rows = self.game.masks[:, : self.num_actions]
        if self.num_envs >= PARALLEL_MIN_BATCH:
            copy_masks(rows.view(np.uint8), self.num_actions, first.view(np.uint8),
                       second.view(np.uint8))  # fmt: skip
        else:
            np.copyto(first, rows.view(np.bool_))
            np.copyto(second, rows.view(np.bool_))
        self._next_masks = second
        return first

    def _fresh_masks(self) -> np.ndarray:
        """An (N, A) bool buffer that nothing but its pool references, else a new one."""
        return _pooled(self._mask_pool, MASK_POOL, (self.num_envs, self.num_actions), np.bool_)


__all__ = ["RummySingleAgentVectorEnv"]
