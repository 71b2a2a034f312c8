"""The batched engine shared by every game: N games as one structured numpy array, stepped by
the batch entry points of ``rummy_env.core.batch`` over the game's compiled hooks. The AEC envs
are a batch of one; the vector env any N.

A game is: ``rules/<game>/state.py`` (its record, ``core.batch.record_dtype``), ``config.py``
(the options dataclass and its ``to_array`` config vector), ``kernels.py`` (the rules as
``@njit`` functions, the hooks of ``core.batch`` among them, registered with
``core.batch.register``), ``game.py`` (a ``BatchedGame`` subclass: sizes, deck, names of the
finished-episode integers, why an action is illegal); ``encodings/<game>.py`` (actions and
observation pieces) and ``envs/<game>.py`` (the AEC env, whose docstring is the spec).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from rummy_env.core import batch
from rummy_env.core import rng as _rng
from rummy_env.core.cards import validate_deck
from rummy_env.core.jit import entry_point
from rummy_env.core.validate import MAX_GAMES, check_actions, check_int, check_list
from rummy_env.encodings.pieces import Piece, piece_bounds

PARALLEL_MIN_BATCH = 256
WARMUP_CALLS = 20
"""Calls of the threaded kernel before ``FastestStep``'s first trial (see its docstring)."""


class FastestStep:
    """Calls whichever of the batch step kernels (threaded, serial) stepped this batch faster
    lately; both give identical results, since the games are independent.

    Threads pay off only while cores are free. On a machine busy with other work a threaded
    call waits for a thread the OS has not scheduled yet, and the serial kernel is then
    several times faster (measured: 3-10x on 2 cores shared with other jobs, against about
    half the time on idle ones). So every ``period`` calls, the next ``trials`` calls of each
    kernel are timed and the one with the lower mean time, the quantity that sets the
    throughput, runs until the next trial. A kernel's first call, which loads its compiled
    code, is not timed.

    The trial runs the kernels in pairs of calls, in ABBA order (``A A B B B B A A ...``),
    so that each kernel steps as many even as odd calls, early as late ones. The calls of a
    learner env alternate cheap and dear (games dealt together stay in step: a learner's draw
    moves no opponent, its discard lets the opponents play a whole turn), and timing the
    kernels in turns, call by call, compared the serial kernel's cheap calls with the
    threaded kernel's dear ones (measured on the Rummy 51 Gymnasium vector env, 256 games:
    the trial chose the serial kernel, 1.8x slower there). ``warmup`` calls of the first
    kernel come before the first trial: a threaded kernel's first calls pay for starting its
    threads and touching fresh memory.
    """

    def __init__(
        self,
        kernels: list[Callable[..., Any]],
        period: int = 500,
        trials: int = 6,
        warmup: int = 0,
    ):
        self.kernels = kernels
        self.period = period
        self.trials = trials + trials % 2  # whole pairs of calls
        self.calls = -warmup  # negative: warm-up calls left
        self.best = 0
        self.loaded = [False] * len(kernels)
        self.times: list[list[float]] = [[] for _ in kernels]

    def _trial_kernel(self, k: int) -> int:
        """The kernel of the trial's ``k``-th call (pairs in ABBA order)."""
        n_k = len(self.kernels)
        pair = k // 2
        pos = pair % n_k
        return pos if (pair // n_k) % 2 == 0 else n_k - 1 - pos

    def __call__(self, *args: Any) -> Any:
        """Step the batch (the kernels' arguments); returns what the kernel returns."""
        if self.calls < 0:
            self.calls += 1
            self.loaded[self.best] = True
            return self.kernels[self.best](*args)
        n_k = len(self.kernels)
        k = self.calls % self.period
        self.calls += 1
        if k >= n_k * self.trials:
            return self.kernels[self.best](*args)
        which = self._trial_kernel(k)
        t0 = time.perf_counter()
        out = self.kernels[which](*args)
        if self.loaded[which]:
            self.times[which].append(time.perf_counter() - t0)
        self.loaded[which] = True
        if k == n_k * self.trials - 1:
            # each kernel made trials >= 2 calls, at most its first one untimed
            self.best = min(range(n_k), key=lambda w: statistics.fmean(self.times[w]))
            for t in self.times:
                t.clear()
        return out


class BatchedGame:
    """``num_games`` independent games of one variant stepped together.

    Subclasses set ``kernels`` (the game's kernels module: it registers the game's hooks of
    ``core.batch`` and holds its ``TABLES``) and fill ``num_players``, ``num_actions``,
    ``obs_size``, ``pieces`` (the observation's named pieces with their bounds), ``deck`` (the
    unshuffled deck a stacked deck must permute) and ``final_fields`` (names of the per-game
    integers written for a finished episode: each player's ``final_points``, the outcome, the
    episode length, then the game's own), then call ``_setup``, which fills ``config``,
    ``cfg`` (``config.to_array()``), ``tables``, ``states`` and ``masks``.
    """

    kernels: ModuleType
    num_players: int
    num_actions: int
    obs_size: int
    pieces: tuple[Piece, ...]
    cfg: np.ndarray
    tables: tuple[np.ndarray, ...]
    states: np.ndarray
    masks: np.ndarray
    deck: np.ndarray
    final_fields: tuple[str, ...]

    def _setup(self, config: Any, num_games: int, states: np.ndarray, mask_width: int) -> None:
        num_games = check_int("num_games", num_games, 1, MAX_GAMES)
        self.config = config
        self.cfg = config.to_array()
        self.tables = self.kernels.TABLES
        self.num_games = num_games
        self.states = states
        self.states["rng"] = _rng.seed_states(None, num_games)
        self.masks = np.zeros((num_games, mask_width), dtype=np.int8)
        self._entries: dict[str, Any] = {}
        self._entries_for: np.ndarray | None = None
        if num_games >= PARALLEL_MIN_BATCH:
            self._step = FastestStep(
                [batch.step_batch_parallel, batch.step_batch], warmup=WARMUP_CALLS
            )
        else:
            self._step = batch.step_batch

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high) float32 bounds of every observation vector (the observation Box)."""
        return piece_bounds(self.pieces)

    def seed(self, seed: int | Sequence[int] | None) -> None:
        """Seed every game's stream (game ``i`` gets ``seed + i`` for an int seed; a list gives
        one non-negative int per game). A rejected seed changes nothing.
        """
        self.states["rng"] = _rng.seed_states(seed, self.num_games)

    def reset(
        self,
        seed: int | Sequence[int] | None = None,
        dealers: Sequence[int | None] | None = None,
        decks: Sequence[Any] | None = None,
        write_obs: bool = True,
    ) -> np.ndarray:
        """Start a new episode in every game; returns (N, obs_size) observations of the players
        to act. ``decks[i]`` (if given and not None) is a stacked deck, top card first.

        Every argument is checked before anything changes: a rejected call leaves the records,
        the random streams and the masks as they were.

        Raises:
            TypeError: (``ArgumentTypeError``) for an argument of the wrong type.
            ValueError: for a bad value (a seed < 0, a seat out of range, not a full deck, a list
                whose length is not ``num_games``), naming it.
        """
        n = self.num_games
        rng = None if seed is None else _rng.seed_states(seed, n)
        dl = np.full(n, -1, dtype=np.int64)
        if dealers is not None:
            for i, d in enumerate(check_list("dealers", dealers, n)):
                if d is not None:
                    dl[i] = self.check_dealer(f"dealers[{i}]", d)
        stacked = np.zeros(n, dtype=np.bool_)
        rows: dict[int, np.ndarray] = {}
        if decks is not None:
            for i, deck in enumerate(check_list("decks", decks, n)):
                if deck is not None:
                    rows[i] = self.check_deck(f"decks[{i}]", deck)
                    stacked[i] = True
        # everything is valid: only now touch the records
        if rng is not None:
            self.states["rng"] = rng
        for i, row in rows.items():
            self._place_deck(i, row)
        obs = np.empty((n, self.obs_size), dtype=np.float32)
        batch.reset_batch(
            self.states, self.cfg, self.tables, dl, stacked, self.masks, obs, write_obs
        )
        return obs

    def check_dealer(self, name: str, dealer: Any) -> int:
        """The first dealer ``dealer`` (a seat) as the code ``reset_episode`` takes.

        Raises:
            TypeError: (``ArgumentTypeError``) if it is not an integer.
            ValueError: if it is not a seat, naming ``name``.
        """
        return check_int(name, dealer, 0, self.num_players - 1)

    def check_deck(self, name: str, deck: Any) -> np.ndarray:
        """A stacked deck (top card first) checked and mapped to the state's encoding.

        Raises:
            TypeError: (``ArgumentTypeError``) if it is not a list of cards.
            ValueError: if it is not a full deck of this game, naming ``name``.
        """
        return self._stack(validate_deck(deck, self.deck, name))

    def _place_deck(self, i: int, row: np.ndarray) -> None:
        """Put a checked stacked deck (``check_deck``) into game ``i``'s record."""
        self.states["deck"][i] = row

    def _stack(self, deck: np.ndarray) -> np.ndarray:
        """Map a validated deck (card ids) to the state's card encoding."""
        return deck

    def check_actions(self, actions: np.ndarray) -> None:
        """Raise ``ValueError`` naming the first game whose action is not legal (or
        ``TypeError`` for actions that are not one integer per game).
        """
        a = check_actions("actions", actions, self.num_games)
        out = (a < 0) | (a >= self.num_actions)
        ok = np.zeros(self.num_games, dtype=bool)
        ok[~out] = self.masks[np.flatnonzero(~out), a[~out]] == 1
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"game {i}: {self.explain_illegal(i, int(a[i]))} (actions[{i}])")

    def step(
        self, actions: np.ndarray, autoreset: bool, write_obs: bool = True, check: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply one action per game. Returns (obs, rewards (N, players), terminated, truncated,
        info). With ``autoreset`` finished games start a new episode in the same call (SAME_STEP);
        ``info["final_observation"]`` (N, players, obs_size) and the ``final_fields`` describe the
        finished episode, for the games where ``info["_final_observation"]`` (= terminated |
        truncated) is True; other rows are undefined (Gymnasium's convention; filling them would
        cost a write of N x players x obs_size floats every step).
        """
        if check:
            self.check_actions(actions)
        a = np.asarray(actions).astype(np.int64, copy=False)
        return self._step_records(self.states, self.masks, a, autoreset, write_obs)

    def step_rows(
        self, rows: np.ndarray, actions: np.ndarray, autoreset: bool, write_obs: bool = True
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """:meth:`step` for the games ``rows`` only (the others stay as they are): one compiled
        call over a gathered copy of their records, written back after. Everything returned
        has one row per entry of ``rows``, in that order.

        Args:
            rows: (K,) distinct game indices.
            actions: (K,) integer actions, one for each game of ``rows``; each must be legal
                (they are not checked: a caller that does not know its actions legal checks
                them against ``masks[rows]`` first).
            autoreset: as in :meth:`step`.
            write_obs: as in :meth:`step`.
        """
        rows = np.asarray(rows, dtype=np.int64)
        a = np.asarray(actions).astype(np.int64, copy=False)
        if rows.shape[0] == self.num_games and np.array_equal(rows, np.arange(self.num_games)):
            return self._step_records(self.states, self.masks, a, autoreset, write_obs)
        states, masks = self.states[rows], self.masks[rows]
        out = self._step_records(states, masks, a, autoreset, write_obs)
        self.states[rows] = states
        self.masks[rows] = masks
        return out

    def _step_records(
        self, states: np.ndarray, masks: np.ndarray, a: np.ndarray, autoreset: bool,
        write_obs: bool,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:  # fmt: skip
        """Step the records ``states`` (all of this game's, or a gathered copy of some) with
        their ``masks`` rows: the work of :meth:`step` and :meth:`step_rows`.
        """
        n, p = states.shape[0], self.num_players
        obs = np.empty((n, self.obs_size), dtype=np.float32)
        rewards = np.empty((n, p), dtype=np.float32)
        term = np.empty(n, dtype=np.bool_)
        trunc = np.empty(n, dtype=np.bool_)
        shape = (n, p, self.obs_size) if autoreset else (1, p, 1)
        final_obs = np.empty(shape, dtype=np.float32)
        final_info = np.zeros((n if autoreset else 1, len(self.final_fields)), dtype=np.int64)
        self._step(
            states, self.cfg, self.tables, a, masks, obs, rewards, term, trunc,
            final_obs, final_info, autoreset, write_obs,
        )  # fmt: skip
        info: dict[str, Any] = {"current_player": states["cur"].astype(np.int64)}
        if autoreset:
            info["final_observation"] = final_obs
            info["_final_observation"] = term | trunc
            self._final_info(info, final_info)
        return obs, rewards, term, trunc, info

    def _final_info(self, info: dict[str, Any], final_info: np.ndarray) -> None:
        """Name the columns of the finished-episode integers (override to group them)."""
        for j, name in enumerate(self.final_fields):
            info[name] = final_info[:, j]

    def observe(self, i: int, player: int) -> np.ndarray:
        """Observation vector of ``player`` in game ``i`` (a fresh array)."""
        # checked: the compiled writer does not bounds-check and would read other memory
        check_int("i", i, 0, self.num_games - 1)
        check_int("player", player, 0, self.num_players - 1)
        return self.observe_unchecked(int(i), int(player))

    def observe_unchecked(self, i: int, player: int) -> np.ndarray:
        """:meth:`observe` for a caller that knows ``i`` and ``player`` in range (Python ints):
        the AEC env's path, a compiled call and an allocation.
        """
        out = np.empty(self.obs_size, dtype=np.float32)
        fn = self._entries.get("write_obs_at") if self._entries_for is self.states else None
        if fn is None:
            fn = self._entry("write_obs_at", self.states, self.cfg, i, player, out)
        fn(self.states, self.cfg, i, player, out)
        return out

    def _entry(self, name: str, *args: Any) -> Any:
        """The compiled code of ``batch.<name>`` for these arguments, called by the one-game
        paths without numba's dispatch (``core.jit.entry_point``: on one game the dispatch
        costs as much as the kernel). Resolved at the first call, so a rare transition's kernel
        still compiles only when first needed, and again if the records were replaced.
        """
        if self._entries_for is not self.states:
            self._entries = {}
            self._entries_for = self.states
        fn = self._entries[name] = entry_point(getattr(batch, name), *args)
        return fn

    def step_single(self, i: int, a: int) -> tuple[bool, bool, int, int]:
        """Apply a legal action in game ``i`` only and refresh its mask (the AEC env's step;
        no output arrays, the rewards are in ``states["rewards"][i]``).

        ``i`` and ``a`` are integers, ``a`` legal (neither is checked).

        Returns:
            (done, truncated, player to act, hands played).
        """
        i, a = int(i), int(a)
        states, cfg, tables, masks = self.states, self.cfg, self.tables, self.masks
        fn = self._entries.get("step_single") if self._entries_for is states else None
        if fn is None:
            fn = self._entry("step_single", states, cfg, tables, i, a, masks)
        pending, done, trunc, cur, hands = fn(states, cfg, tables, i, a, masks)
        if pending:  # a rare transition (e.g. scoring a knock), compiled when first needed
            return self.settle_pending(i)
        return done, trunc, cur, hands

    def settle_pending(self, i: int) -> tuple[bool, bool, int, int]:
        """Finish the transition a step left to the game's ``settle`` hook in game ``i`` and
        refresh its mask (``batch.settle_single``, compiled when first needed).

        Returns:
            (done, truncated, player to act, hands played).
        """
        states, cfg, tables, masks = self.states, self.cfg, self.tables, self.masks
        fn = self._entries.get("settle_single") if self._entries_for is states else None
        if fn is None:
            fn = self._entry("settle_single", states, cfg, tables, i, masks)
        return fn(states, cfg, tables, i, masks)

    def play_random(self, episodes: int = 1, parallel: bool = True) -> dict[str, np.ndarray]:
        """Play ``episodes`` episodes of uniformly random legal actions in every game, inside
        the compiled core (each game draws from its own stream: seed with :meth:`seed`).

        Returns:
            dict: (N, episodes) int64 ``outcome`` (the last hand's outcome code), ``decisions``
            and ``hands`` per episode, and (N, episodes, players) ``points`` (each seat's
            points of the episode, as ``final_points`` of the vector env's infos).
        """
        n = len(self.states)
        out = {k: np.zeros((n, episodes), np.int64) for k in ("outcome", "decisions", "hands")}
        out["points"] = np.zeros((n, episodes, self.num_players), np.int64)
        fn = batch.play_random_parallel if parallel else batch.play_random
        fn(self.states, self.cfg, self.tables, episodes, out["outcome"], out["decisions"],
           out["points"], out["hands"])  # fmt: skip
        return out

    def action_mask(self, i: int) -> np.ndarray:
        """Legal-action mask (fresh int8 array) of the player to act in game ``i``."""
        return self.masks[i, : self.num_actions].copy()

    def is_legal(self, i: int, a: int) -> bool:
        """True if action ``a`` is legal now in game ``i``."""
        return 0 <= a < self.num_actions and self.masks[i, a] == 1

    def refresh_masks(self) -> None:
        """Recompute every mask from the states (after editing states directly)."""
        batch.refresh_masks(self.states, self.cfg, self.tables, self.masks)

    def explain_illegal(self, i: int, a: int) -> str:  # pragma: no cover - overridden
        """Why action ``a`` is not legal now in game ``i``."""
        return f"action {a} is not legal now"

    def sample_worlds(
        self, i: int, player: int, n: int, seed: int | np.random.Generator | None = None
    ) -> BatchedGame:  # pragma: no cover - every game overrides it
        """``n`` full game states consistent with what ``player`` knows in game ``i``, as a
        batched game of this variant (every game defines it: see its engine).
        """
        raise NotImplementedError
