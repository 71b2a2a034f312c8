"""The rummy games as OpenSpiel Python games, backed by the suite's compiled kernels.

Importing this module registers three games with ``pyspiel`` (OpenSpiel is an optional
dependency, imported only here)::

    import pyspiel
    import rummy_agents.integrations.openspiel  # registers the games

    game = pyspiel.load_game("rummy_env_gin_rummy(knock_limit=5)")
    game = pyspiel.load_game("rummy_env_five_hundred_rum(num_players=5)")
    game = pyspiel.load_game("rummy_env_rummy51(num_players=4,reward=zero_sum)")

Each game's parameters are every rule option of its env (the fields of ``GinRummyConfig``,
``FiveHundredRumConfig``, ``Rummy51Config``) with the env's defaults, ``num_players``
included. OpenSpiel parameters cannot be ``None``: the options whose default is ``None``
(Gin's ``target``, 500 Rum's ``num_decks``, every ``max_steps``) take ``0`` for ``None``.
An unknown name or a value of the wrong type is refused by ``pyspiel.load_game`` (naming it);
a bad value raises the env's ``ValueError`` naming the option.

**Chance: an explicit deal.** A state starts at chance nodes that deal the first hand as the
env's ``reset(options={"deck": ..., "dealer": ...})`` takes it: first the dealer (a seat; with
4-player Gin the pair of first dealers, outcome ``d0 + 2 * (d2 - 2)``), then the stacked deck,
one card per chance node, top card first (4-player Gin: table 0's deck, then table 1's). A
card node's outcomes are the card types left (``card_to_str`` names them: ``"As"``, ``"JK"``),
each with probability (copies left) / (cards left), so every deck order is equally likely. The
chance mode is ``EXPLICIT_STOCHASTIC``: enumerating the deck order card by card keeps each
node small (at most 53 outcomes), where a single node over 52! orders could not be listed.
What the kernels shuffle themselves later (the next hands of a match, Rummy 51's pile
reshuffles, 4-player Gin's re-dealt rounds) comes from the game record's random stream, seeded
from a hash of the explicit deal, so a state is a deterministic function of its history (the
history replays exactly; serialization relies on it). Those later shuffles are therefore not
chance nodes: algorithms that enumerate chance outcomes see them as fixed by the first deal.
The stream is hidden (in no observation), and ``resample_from_infostate`` gives each sampled
world a fresh stream.

**Players' view.** The observation tensor of a player is the env's observation vector
(``env.observe(agent)["observation"]``), with the env's named pieces as the observer's
``dict``; its string lists the non-zero entries of each piece (cards by name). The information
state tensor is the same vector: the env's encoding is a Markov summary (pile order, known
cards, melds, scores), not the full history. The information state string is perfect recall:
the observation string, then the player's view of every decision so far: its own actions in
full with a digest of its private pieces (its hand; 4-player Gin: also its partner's result)
when it acted, the other players' actions as the table sees them (``public_action_name``: a
Gin knock's discard is face down), and with 4-player Gin only the seat for a move at the
other table. During the deal nothing is observed but the dealer and the number of cards dealt.

**Rewards.** ``rewards()`` are the env's rewards of the last step, ``returns()`` their sum
per seat (``RewardModel.REWARDS``: match episodes pay after every hand). Gin Rummy is
``ZERO_SUM`` for every option set; 500 Rum (raw points) and Rummy 51 (``reward="penalty"``
and the clipped ``"normalized"``) are not, so both are ``GENERAL_SUM``. ``min_utility`` /
``max_utility`` and ``max_game_length`` are true bounds derived from the options (see
:func:`_bounds`); an episode of several hands (``episode="match"``/``"game"``) has no finite
bound without ``max_steps``, so such a game needs ``max_steps`` (``ValueError`` otherwise).

**States.** A state holds its game record (a copy of one row of the shared ``BatchedGame``'s
structured array) and its legal-action mask; each step runs the compiled
``step_single``/``settle_single`` of the game on that row. One engine (the raw AEC env and its
batched game of one, compiled kernels resolved once) is built per distinct option set and
shared by every game object and state with those options; ``clone()`` copies the record bytes,
the mask and a few Python values (the decision trace is shared, copy-on-append).
``serialize()`` is OpenSpiel's for Python games (the history plus a pickle of the state's
Python attributes: the record bytes); a deserialized state is the same state.
``resample_from_infostate`` draws from ``sample_worlds`` of the env (a batch of worlds is
drawn once per state and player, then used in turn), so ``ISMCTSBot`` runs on every game. A
resampled state keeps the real state's ``history()`` (OpenSpiel has no way to set it): use it
to search, not to serialize.

:func:`as_bot` wraps an agent of our registry (a spec such as ``"greedy"``) or any object with
``act(observation, view)`` as a ``pyspiel.Bot``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

import rummy_env
from rummy_env.core import batch
from rummy_env.core.cards import card_to_str
from rummy_env.core.jit import entry_point

try:  # optional dependency: this module is the only place that imports it
    import pyspiel
except ImportError as _err:  # pragma: no cover - exercised only without OpenSpiel
    raise ImportError(
        "rummy_agents.integrations.openspiel needs OpenSpiel: pip install open_spiel"
    ) from _err

GAME_NAMES = ("gin_rummy", "five_hundred_rum", "rummy51")
"""The suite's games, registered as ``rummy_env_<name>``."""

SHORT_NAMES = {g: f"rummy_env_{g}" for g in GAME_NAMES}
_LONG_NAMES = {"gin_rummy": "Gin Rummy", "five_hundred_rum": "500 Rum", "rummy51": "Rummy 51"}
_PLAYERS = {"gin_rummy": (2, 4), "five_hundred_rum": (2, 8), "rummy51": (2, 6)}
_MULTI_HAND = {"gin_rummy": "match", "five_hundred_rum": "game", "rummy51": "match"}

# card values: Gin deadwood of 10 cards is at most 100; a 500 Rum card is worth at most 15;
# a Rummy 51 deck's penalty is 8 * (11 + 2+...+10 + 3 * 10) + 4 * 25 = 860, a Rummy adds 25
_RUM_CARD_MAX = 15
_R51_PENALTY_MAX = 860 + 25


# -- options <-> OpenSpiel parameters -------------------------------------------------------
def _config_cls(game: str) -> Any:
    from rummy_env.games import GAMES

    return GAMES[game][0]


def parameter_specification(game: str) -> dict[str, Any]:
    """The OpenSpiel parameters of ``game``: each rule option with its default (``0`` for an
    option whose default is ``None``), ``num_players`` included.
    """
    spec = {}
    for f in dataclasses.fields(_config_cls(game)):
        default = f.default
        spec[f.name] = 0 if default is None else default
    return spec


def _none_options(game: str) -> set[str]:
    return {f.name for f in dataclasses.fields(_config_cls(game)) if f.default is None}


def options_from_params(game: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """The env's rule options for OpenSpiel parameters ``params`` (missing ones: defaults).

    Raises:
        ValueError: for an unknown game or parameter name, naming it and the valid ones.
    """
    if game not in SHORT_NAMES:
        raise ValueError(f"unknown game {game!r}; known: {list(GAME_NAMES)}")
    spec = parameter_specification(game)
    params = dict(params or {})
    unknown = sorted(set(params) - set(spec))
    if unknown:
        raise ValueError(
            f"unknown {SHORT_NAMES[game]} parameter(s) {unknown}; valid: {sorted(spec)}"
        )
    nones = _none_options(game)
    options = {}
    for name, default in spec.items():
        value = params.get(name, default)
        if name in nones and type(value) is int and value == 0:
            value = None  # OpenSpiel has no None: 0 stands for it
        options[name] = value
    return options


# -- the engine shared by the games and states of one option set ----------------------------
class _Engine:
    """The raw AEC env of one option set, its batched game of one and the compiled entry
    points a state calls on its own record: built once per option set (``_engine``).
    """

    def __init__(self, game: str, options: dict[str, Any]) -> None:
        self.name = game
        self.options = dict(options)
        self.env = rummy_env.ENV_MODULES[game].raw_env(**options)
        self.config = self.env.config
        g = self.game = self.env.game
        self.num_players = g.num_players
        self.num_actions = g.num_actions
        self.obs_size = g.obs_size
        self.pieces = tuple(g.pieces)
        self.cfg, self.tables = g.cfg, g.tables
        self.dtype = g.states.dtype
        self.agents = list(self.env.possible_agents)
        self.four = game == "gin_rummy" and self.num_players == 4
        # the deal: 4-player Gin deals two 52-card decks; dealer outcomes
        deck = [int(c) for c in g.deck]
        self.decks = 2 if self.four else 1
        self.per_deck = len(deck)  # each deck is dealt in full before the next
        self.deck_len = len(deck) * self.decks
        self.card_types = sorted(set(deck))
        self.type_counts = [deck.count(c) for c in self.card_types]
        self.type_index = {c: i for i, c in enumerate(self.card_types)}
        self.dealer_outcomes = 4 if self.four else self.num_players
        self.hand_width = 52 if game == "gin_rummy" else 53  # the hand piece, first in obs
        self.private = [(0, self.hand_width)]
        if self.four:  # the partner's result, from the other table, is the team's alone
            off = {p.name: p for p in self.pieces}
            for name in ("partner_outcome", "partner_points"):
                p = off[name]
                self.private.append((p.offset, p.offset + p.size))
        self._names: dict[int, str] = {}
        self._public: dict[int, str] = {}
        self._fns: dict[str, Any] = {}
        self.bounds = _bounds(game, self.config)

    # compiled entry points, resolved with a state's own arrays at the first call
    def _fn(self, name: str, *args: Any) -> Any:
        fn = self._fns.get(name)
        if fn is None:
            fn = self._fns[name] = entry_point(getattr(batch, name), *args)
        return fn

    def step(self, rec: np.ndarray, mask: np.ndarray, a: int) -> tuple[bool, bool, int]:
        """Play legal action ``a`` on the record ``rec`` (refreshing ``mask``), as the AEC
        env's step: (done, truncated, player to act).
        """
        cfg, tables = self.cfg, self.tables
        fn = self._fns.get("step_single") or self._fn("step_single", rec, cfg, tables, 0, a, mask)
        pending, done, trunc, cur, _ = fn(rec, cfg, tables, 0, a, mask)
        if pending:  # a rare transition (scoring a knock), compiled when first needed
            fn = self._fns.get("settle_single") or self._fn(
                "settle_single", rec, cfg, tables, 0, mask
            )
            done, trunc, cur, _ = fn(rec, cfg, tables, 0, mask)
        return bool(done), bool(trunc), int(cur)

    def observe(self, rec: np.ndarray, player: int) -> np.ndarray:
        """The observation vector of ``player`` on record ``rec`` (a fresh array)."""
        out = np.empty(self.obs_size, dtype=np.float32)
        fn = self._fns.get("write_obs_at") or self._fn("write_obs_at", rec, self.cfg, 0, 0, out)
        fn(rec, self.cfg, 0, player, out)
        return out

    def private_digest(self, rec: np.ndarray, player: int) -> str:
        """A short digest of what ``player`` sees privately now (its hand; 4-player Gin: and
        its partner's result).
        """
        obs = self.observe(rec, player)
        data = b"".join(obs[lo:hi].tobytes() for lo, hi in self.private)
        return hashlib.blake2b(data, digest_size=6).hexdigest()

    def action_name(self, a: int) -> str:
        name = self._names.get(a)
        if name is None:
            name = self._names[a] = self.env.action_name(a)
        return name

    def public_action_name(self, a: int) -> str:
        name = self._public.get(a)
        if name is None:
            name = self._public[a] = self.env.public_action_name(a)
        return name

    def deal(self, dealer: int, cards: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Reset on the dealt deck (top first) and first dealer; returns copies of the new
        record and mask. The record's stream (later deals) is seeded from the deal.
        """
        seed = deal_seed(dealer, cards)
        d: Any = dealer
        deck: Any = cards
        if self.four:
            d = [dealer & 1, 2 + (dealer >> 1)]
            deck = [cards[:52], cards[52:]]
        g = self.game
        g.reset(seed=seed, dealers=[d], decks=[deck], write_obs=False)
        return _copy_record(g.states), g.masks.copy()

    def with_record(self, rec: Any, mask: Any, fn: Callable[[], Any]) -> Any:
        """``fn()`` with the engine's game showing record ``rec`` (for the env's helpers that
        read ``game.states[0]``: rendering, ``sample_worlds``).
        """
        g = self.game
        saved = g.states, g.masks
        g.states, g.masks = rec, mask
        try:
            return fn()
        finally:
            g.states, g.masks = saved


def deal_seed(dealer: int, cards: list[int]) -> int:
    """The seed of a game record's random stream after the explicit deal (dealer outcome and
    dealt card types, top first): what the AEC env's ``reset(seed=...)`` takes to deal the
    same game (tests compare the two this way).
    """
    data = bytes([dealer]) + np.asarray(cards, dtype=np.uint8).tobytes()
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") >> 2


_ENGINES: dict[tuple[str, tuple[tuple[str, Any], ...]], _Engine] = {}


def _engine_key(game: str, options: dict[str, Any]) -> tuple[str, tuple[tuple[str, Any], ...]]:
    return game, tuple(sorted(options.items()))


def _engine(key: tuple[str, tuple[tuple[str, Any], ...]]) -> _Engine:
    eng = _ENGINES.get(key)
    if eng is None:
        eng = _ENGINES[key] = _Engine(key[0], dict(key[1]))
    return eng


def _copy_record(rec: np.ndarray) -> np.ndarray:
    """A copy of a (1,) record array (through its bytes: numpy copies a nested structured
    dtype field by field, 10-50x slower).
    """
    out = np.frombuffer(rec.view(np.uint8).copy(), dtype=rec.dtype)  # writable, aligned
    return out


# -- bounds ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Bounds:
    """True bounds of an option set: ``min_utility``, ``max_utility`` (of the returns) and
    ``max_game_length`` (decisions; the deal's chance nodes are not counted).
    """

    min_utility: float
    max_utility: float
    max_game_length: int


def _bounds(game: str, c: Any) -> Bounds:
    """The bounds of ``game`` under config ``c`` (see each branch for the argument).

    Raises:
        ValueError: for an episode of several hands without ``max_steps``.
    """
    multi = c.episode == _MULTI_HAND[game]
    steps = c.max_steps
    if multi and steps is None:
        raise ValueError(
            f"episode={c.episode!r} needs max_steps in OpenSpiel: a {_LONG_NAMES[game]} "
            f"{c.episode} has no finite bound on its length (OpenSpiel's max_game_length); "
            "give max_steps=N (the env truncates after N decisions)"
        )
    p = c.num_players
    if game == "gin_rummy":
        # a hand: at most 52 stock draws and max_pile_draws pile draws, each with a discard;
        # 3 upcard decisions, 2 fiftieth-card offers, manual melding (3 melds + END for the
        # knocker, 3 melds + 11 lay-offs + END for the defender): 32 leaves room
        hand = 2 * (52 + c.max_pile_draws) + 32
        length = hand * (2 if p == 4 else 1)
        scale = c.hand_score_scale()  # one hand's score (4 players: half a round's, too)
        if c.reward == "normalized":
            lo, hi = -1.0, 1.0
        elif not multi:
            lo, hi = -float(scale), float(scale)
        else:
            assert steps is not None
            # a match total: points below target before the last hand, its 2 hands' scores,
            # at most 5 boxes a hand (Oklahoma extra boxes) and hands <= decisions, the game
            # bonus and a shutout (200, or the total doubled); 3 players: from two losers
            total = c.target + 2 * scale + 5 * steps * c.box_bonus + c.game_bonus + 200
            bound = 2 * 2 * total + scale * steps
            lo, hi = -float(bound), float(bound)
    elif game == "five_hundred_rum":
        d = c.deck_size
        # turns: stock draws <= D, top-discard draws <= max_pile_draws, deep draws <= D (each
        # melds its deepest card), one last turn each; each turn and each "Rummy!" call (<= D:
        # it melds the called card) is a draw, a discard and P - 1 call offers; plays <= D
        turns = 2 * d + c.max_pile_draws + p
        length = (p + 1) * (turns + d) + d
        hand = float(_RUM_CARD_MAX * d)  # melded or held: every card at most 15
        if c.reward == "normalized":
            lo, hi = -1.0, 1.0
        elif not multi:
            lo, hi = -hand, hand
        else:
            assert steps is not None
            lo, hi = -hand * steps, hand * steps  # a hand per decision at most
    else:
        # turns: the stock (108 cards) renewed at most max_reshuffles times, pile draws;
        # plays: 104 naturals placed, jokers laid at most 4 + retrievals, retrievals <= 104
        turns = 108 * (1 + c.max_reshuffles) + c.max_pile_draws + 1
        length = 2 * turns + 320
        pen = float(_R51_PENALTY_MAX)
        hands = 1 if not multi else steps
        assert hands is not None
        if c.reward == "normalized":
            lo, hi = -1.0, 1.0
        elif c.reward == "payout":
            lo, hi = -1.0, float(p - 1)
        elif c.reward == "penalty":
            lo, hi = -pen * hands, 0.0
        else:
            lo, hi = -pen * hands, pen * hands
    if multi:
        assert steps is not None
        length = steps  # many hands: only the truncation bounds them
    elif steps is not None:
        length = min(length, steps)
    return Bounds(lo, hi, int(length))


# -- the decision trace (shared between clones, copy-on-append) -----------------------------
class _Trace:
    """An append-only list shared by a state and its clones: each holds the list and its own
    length; appending where the list is longer than one's length (a clone appended first)
    forks a copy. ``deepcopy`` shares, ``pickle`` keeps one's own entries.
    """

    __slots__ = ("items", "n")

    def __init__(self, items: list[tuple[Any, ...]], n: int) -> None:
        self.items = items
        self.n = n

    def append(self, entry: tuple[Any, ...]) -> _Trace:
        if len(self.items) == self.n:
            self.items.append(entry)
            return _Trace(self.items, self.n + 1)
        items = self.items[: self.n]
        items.append(entry)
        return _Trace(items, self.n + 1)

    def __iter__(self) -> Any:
        return iter(self.items[: self.n])

    def __len__(self) -> int:
        return self.n

    def __deepcopy__(self, memo: dict[int, Any]) -> _Trace:
        return self  # immutable from the holder's view

    def __getstate__(self) -> tuple[list[tuple[Any, ...]], int]:
        return self.items[: self.n], self.n

    def __setstate__(self, state: tuple[list[tuple[Any, ...]], int]) -> None:
        self.items, self.n = state


# -- the state's data, one attribute (OpenSpiel clones a Python state attribute by attribute)
class _Core:
    """Everything a state holds; ``deepcopy`` (OpenSpiel's clone) copies the record and mask
    bytes and the small values, ``pickle`` (serialization) leaves out the shared engine.
    """

    __slots__ = (
        "key", "eng", "dealer", "dealt", "left", "rec", "mask", "cur", "done", "trunc",
        "returns", "rewards", "trace", "worlds",
    )  # fmt: skip

    def __init__(self, key: Any, eng: _Engine) -> None:
        self.key = key
        self.eng = eng
        self.dealer = -1
        self.dealt: list[int] = []
        self.left = list(eng.type_counts)
        self.rec: np.ndarray | None = None
        self.mask: np.ndarray | None = None
        self.cur = -1
        self.done = False
        self.trunc = False
        self.returns = [0.0] * eng.num_players
        self.rewards = [0.0] * eng.num_players
        self.trace = _Trace([], 0)
        self.worlds: Any = None  # (player, batched worlds, next index): resampling cache

    def __deepcopy__(self, memo: dict[int, Any]) -> _Core:
        new = _Core.__new__(_Core)
        new.key, new.eng = self.key, self.eng
        new.dealer = self.dealer
        if self.rec is None:
            new.dealt, new.left = self.dealt[:], self.left[:]
            new.rec = new.mask = None
        else:  # the deal is no longer read once played
            new.dealt, new.left = self.dealt, self.left
            new.rec = _copy_record(self.rec)
            new.mask = self.mask.copy()  # type: ignore[union-attr]
        new.cur, new.done, new.trunc = self.cur, self.done, self.trunc
        new.returns, new.rewards = self.returns[:], self.rewards[:]
        new.trace = self.trace
        new.worlds = None
        return new

    def __getstate__(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__ if k not in ("eng", "worlds")}
        if self.rec is not None:
            out["rec"] = self.rec.tobytes()
        return out

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self.eng = _engine(self.key)
        if self.rec is not None:
            rec = np.empty(1, dtype=self.eng.dtype)
            rec.view(np.uint8)[:] = np.frombuffer(self.rec, dtype=np.uint8)  # holes too
            self.rec = rec
        self.worlds = None


# -- game, state, observer ------------------------------------------------------------------
def _game_type(game: str) -> Any:
    lo, hi = _PLAYERS[game]
    utility = (
        pyspiel.GameType.Utility.ZERO_SUM
        if game == "gin_rummy"
        else pyspiel.GameType.Utility.GENERAL_SUM
    )
    return pyspiel.GameType(
        short_name=SHORT_NAMES[game],
        long_name=f"rummy_env {_LONG_NAMES[game]}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=hi,
        min_num_players=lo,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        provides_factored_observation_string=False,
        parameter_specification=parameter_specification(game),
    )


class RummyGame(pyspiel.Game):
    """One of the suite's games as an OpenSpiel game (subclasses fix ``GAME``).

    Args:
        params: OpenSpiel parameters (rule options and ``num_players``; missing: defaults).

    Raises:
        ValueError: for an unknown parameter, a bad option value (the env's message, naming
            it) or a multi-hand episode without ``max_steps``.
    """

    GAME = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        options = options_from_params(self.GAME, params)
        key = _engine_key(self.GAME, options)
        eng = _engine(key)  # builds the env: bad options raise here, naming the option
        b = eng.bounds
        zero = self.GAME == "gin_rummy"
        info = pyspiel.GameInfo(
            num_distinct_actions=eng.num_actions,
            max_chance_outcomes=max(len(eng.card_types), eng.dealer_outcomes),
            num_players=eng.num_players,
            min_utility=b.min_utility,
            max_utility=b.max_utility,
            utility_sum=0.0 if zero else None,
            max_game_length=b.max_game_length,
        )
        spec = parameter_specification(self.GAME)
        full = {k: (0 if v is None else v) for k, v in options.items()}
        super().__init__(_GAME_TYPES[self.GAME], info, {k: full[k] for k in spec})
        self._key = key
        self._engine = eng

    @property
    def options(self) -> dict[str, Any]:
        """The env's rule options of this game."""
        return dict(self._engine.options)

    def new_initial_state(self) -> RummyState:
        """The state before the deal (a chance node)."""
        return RummyState(self)

    def max_chance_nodes_in_history(self) -> int:
        """The deal: the dealer, then every card of the deck(s)."""
        return 1 + self._engine.deck_len

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> RummyObserver:
        """The observer of a player's own view (``perfect_recall`` for information states).

        Raises:
            ValueError: for observer parameters or a view other than a player's own (public
                and private information).
        """
        return RummyObserver(self._engine, iig_obs_type, params)


class RummyState(pyspiel.State):
    """A state of a :class:`RummyGame`: the deal's chance nodes, then the env's decisions."""

    def __init__(self, game: RummyGame) -> None:
        super().__init__(game)
        self._c = _Core(game._key, game._engine)

    # -- OpenSpiel API ------------------------------------------------------------------
    def current_player(self) -> int:
        """The seat to act, ``CHANCE`` during the deal, ``TERMINAL`` once it is over."""
        c = self._c
        if c.rec is None:
            return int(pyspiel.PlayerId.CHANCE)
        if c.done or c.trunc:
            return int(pyspiel.PlayerId.TERMINAL)
        return c.cur

    def _legal_actions(self, player: int) -> list[int]:
        c = self._c
        return np.flatnonzero(c.mask[0, : c.eng.num_actions]).tolist()  # type: ignore[index]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The dealer (uniform), then the next card of the deck: each type left with
        probability copies left / cards left.
        """
        c = self._c
        eng = c.eng
        if c.dealer < 0:
            k = eng.dealer_outcomes
            return [(d, 1.0 / k) for d in range(k)]
        total = eng.per_deck - len(c.dealt) % eng.per_deck
        return [(t, n / total) for t, n in zip(eng.card_types, c.left, strict=True) if n]

    def _apply_action(self, action: int) -> None:
        c = self._c
        eng = c.eng
        c.worlds = None
        if c.rec is None:
            # pyspiel checks no action of a Python game: refuse an impossible one here, before
            # the state changes (a card with no copy left would only fail at the deal's end)
            if c.dealer < 0:
                if not 0 <= int(action) < eng.dealer_outcomes:
                    raise ValueError(
                        f"chance outcome {action} is not a dealer: 0..{eng.dealer_outcomes - 1}"
                    )
                c.dealer = int(action)
                return
            i = eng.type_index.get(int(action))
            if i is None or c.left[i] <= 0:
                left = [card_to_str(t) for t, n in zip(eng.card_types, c.left, strict=True) if n]
                raise ValueError(
                    f"chance outcome {action} is not a card left to deal; left: {', '.join(left)}"
                )
            c.left[i] -= 1
            c.dealt.append(int(action))
            if len(c.dealt) % eng.per_deck == 0:  # 4-player Gin: the second table's deck
                c.left = list(eng.type_counts)
            if len(c.dealt) == eng.deck_len:
                c.rec, c.mask = eng.deal(c.dealer, c.dealt)
                c.cur = int(c.rec["cur"][0])
                c.done = bool(c.rec["done"][0])
                c.trunc = bool(c.rec["truncated"][0])
            return
        seat, a = c.cur, int(action)
        if not (0 <= a < eng.num_actions and c.mask[0, a]) or c.done:  # type: ignore[index]
            raise ValueError(f"action {action} is not legal for player {seat} now")
        board = tuple(c.rec["board_of"][0].tolist()) if eng.four else None
        entry = (seat, a, eng.private_digest(c.rec, seat), board)
        c.done, c.trunc, c.cur = eng.step(c.rec, c.mask, a)  # type: ignore[arg-type]
        c.trace = c.trace.append(entry)
        r = c.rec["rewards"][0].tolist()
        c.rewards = r
        c.returns = [x + y for x, y in zip(c.returns, r, strict=True)]

    def _action_to_string(self, player: int, action: int) -> str:
        c = self._c
        eng = c.eng
        if player == pyspiel.PlayerId.CHANCE:
            if c.dealer < 0:
                if eng.four:
                    return f"Dealers {eng.agents[action & 1]} {eng.agents[2 + (action >> 1)]}"
                return f"Dealer {eng.agents[action]}"
            return f"Deal {card_to_str(int(action))}"
        return eng.action_name(int(action))

    def is_terminal(self) -> bool:
        """The episode is over (the env's termination or truncation)."""
        c = self._c
        return c.done or c.trunc

    def returns(self) -> list[float]:
        """Each seat's rewards so far, summed."""
        return list(self._c.returns)

    def rewards(self) -> list[float]:
        """Each seat's reward of the last step (zeros during the deal)."""
        return list(self._c.rewards)

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> RummyState:
        """A state consistent with what ``player_id`` knows (``sample_worlds`` of the env;
        during the deal a deck prefix dealt anew). ``probability_sampler()`` seeds the draw.
        """
        c = self._c
        eng = c.eng
        try:
            seed = int(float(probability_sampler()) * 2**52)
        except TypeError:  # not callable: fall back on numpy's stream
            seed = int(np.random.default_rng().integers(2**52))
        new = self.clone()
        nc = new._c
        if c.rec is None:
            cards = [t for t, n in zip(eng.card_types, eng.type_counts, strict=True)
                     for _ in range(n)]  # fmt: skip
            rng = np.random.default_rng(seed)
            dealt: list[int] = []
            for _ in range(eng.decks):  # whole decks, cut to what was dealt
                dealt += [cards[i] for i in rng.permutation(len(cards))]
            nc.dealt = dealt[: len(c.dealt)]
            nc.left = list(eng.type_counts)
            for t in nc.dealt[len(nc.dealt) - len(nc.dealt) % eng.per_deck :]:
                nc.left[eng.type_index[t]] -= 1
            return new
        if c.done or c.trunc:
            return new
        worlds = c.worlds
        if worlds is None or worlds[0] != player_id or worlds[2] >= worlds[1].num_games:
            batch_ = eng.with_record(
                c.rec, c.mask, lambda: eng.game.sample_worlds(0, player_id, 16, seed)
            )
            worlds = c.worlds = [player_id, batch_, 0]
        i = worlds[2]
        worlds[2] += 1
        w = worlds[1]
        nc.rec = _copy_record(w.states[i : i + 1])
        nc.mask = w.masks[i : i + 1].copy()
        return new

    def __str__(self) -> str:
        """The referee's view: the table (every card) and a digest of the record."""
        c = self._c
        eng = c.eng
        if c.rec is None:
            dealer = "?" if c.dealer < 0 else self._action_to_string(-1, c.dealer)
            dealt = " ".join(card_to_str(t) for t in c.dealt)
            return f"dealing | {dealer} | {len(c.dealt)}/{eng.deck_len} dealt: {dealt}"
        rec, mask = c.rec, c.mask
        text = eng.with_record(rec, mask, eng.env.render_text)
        digest = hashlib.blake2b(rec.tobytes(), digest_size=8).hexdigest()
        return f"{text}\nreturns {c.returns} | record {digest}"

    # -- helpers ------------------------------------------------------------------------
    def observation_vector(self, player: int) -> np.ndarray:
        """The env's observation vector of ``player`` (zeros during the deal)."""
        c = self._c
        if c.rec is None:
            return np.zeros(c.eng.obs_size, dtype=np.float32)
        return c.eng.observe(c.rec, player)

    @property
    def record(self) -> np.ndarray | None:
        """A copy of the game record (referee's view; ``None`` during the deal)."""
        c = self._c
        return None if c.rec is None else _copy_record(c.rec)


class RummyObserver:
    """OpenSpiel's Python observer of a player's own view: the env's observation vector
    (``tensor``, with the env's pieces as ``dict``) and its text; with ``perfect_recall`` the
    text adds the player's view of every decision so far (see the module docstring).

    Raises:
        ValueError: for observer parameters, or a view other than a player's own.
    """

    def __init__(self, eng: _Engine, iig_obs_type: Any, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"observer parameters are not supported, got {params}")
        self.perfect_recall = False
        if iig_obs_type is not None:
            if not (
                iig_obs_type.public_info
                and iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
            ):
                raise ValueError(
                    "only a player's own view is observable (public_info=True, "
                    "private_info=SINGLE_PLAYER), got public_info="
                    f"{iig_obs_type.public_info}, private_info={iig_obs_type.private_info}"
                )
            self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self._eng = eng
        self.tensor = np.zeros(eng.obs_size, np.float32)
        self.dict = {
            p.name: self.tensor[p.offset : p.offset + p.size].reshape(p.shape) for p in eng.pieces
        }

    def set_from(self, state: RummyState, player: int) -> None:
        """Write ``player``'s observation vector of ``state`` into ``tensor``."""
        c = state._c
        if c.rec is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = c.eng.observe(c.rec, player)

    def string_from(self, state: RummyState, player: int) -> str:
        """``player``'s observation as text (information state: and its decision trace)."""
        c = state._c
        eng = c.eng
        if c.rec is None:
            dealer = "?" if c.dealer < 0 else state._action_to_string(-1, c.dealer)
            text = f"p{player} | dealing | {dealer} | {len(c.dealt)}/{eng.deck_len} dealt"
        else:
            text = f"p{player} | " + _obs_text(eng, eng.observe(c.rec, player))
        if not self.perfect_recall:
            return text
        return text + "\n" + " ".join(_trace_view(eng, c.trace, player))


def _obs_text(eng: _Engine, obs: np.ndarray) -> str:
    """The non-zero entries of each observation piece (card-indexed pieces by card name)."""
    parts = []
    for p in eng.pieces:
        v = obs[p.offset : p.offset + p.size]
        nz = np.flatnonzero(v)
        if not nz.size:
            continue
        last = p.shape[-1]
        items = []
        for flat in nz.tolist():
            x = float(v[flat])
            val = "" if x == 1.0 else f"={x:.4g}"
            if last in (52, 53):
                outer, card = divmod(flat, last)
                where = f"{outer}/" if len(p.shape) > 1 else ""
                items.append(f"{where}{card_to_str(card)}{val}")
            else:
                items.append(f"{flat}{val or '=1'}")
        parts.append(f"{p.name}: {' '.join(items)}")
    return " | ".join(parts)


def _trace_view(eng: _Engine, trace: _Trace, player: int) -> list[str]:
    """``player``'s view of each decision: its own in full (with its private digest), the
    others' as the table sees them, a move at the other table (4-player Gin) as the seat.
    """
    out = []
    for seat, a, digest, board in trace:
        if seat == player:
            out.append(f"p{seat}#{digest}:{eng.action_name(a)}")
        elif board is not None and board[seat] != board[player]:
            out.append(f"p{seat}:-")
        else:
            out.append(f"p{seat}:{eng.public_action_name(a)}")
    return out


# -- registration ---------------------------------------------------------------------------
class GinRummyGame(RummyGame):
    """Gin Rummy (2 to 4 players) as an OpenSpiel game: ``rummy_env_gin_rummy``."""

    GAME = "gin_rummy"


class FiveHundredRumGame(RummyGame):
    """500 Rum (2 to 8 players) as an OpenSpiel game: ``rummy_env_five_hundred_rum``."""

    GAME = "five_hundred_rum"


class Rummy51Game(RummyGame):
    """Rummy 51 (2 to 6 players) as an OpenSpiel game: ``rummy_env_rummy51``."""

    GAME = "rummy51"


GAME_CLASSES: dict[str, type[RummyGame]] = {
    "gin_rummy": GinRummyGame,
    "five_hundred_rum": FiveHundredRumGame,
    "rummy51": Rummy51Game,
}

_GAME_TYPES = {g: _game_type(g) for g in GAME_NAMES}

for _g in GAME_NAMES:
    if SHORT_NAMES[_g] not in pyspiel.registered_names():  # a reload must not re-register
        pyspiel.register_game(_GAME_TYPES[_g], GAME_CLASSES[_g])


def load_game(game: str, **params: Any) -> RummyGame:
    """``pyspiel.load_game`` of ``rummy_env_<game>`` with ``params`` (rule options; ``None``
    may be given for an option whose default is ``None``).

    Raises:
        ValueError: for an unknown game or parameter, or a bad value.
    """
    if game not in GAME_CLASSES:
        raise ValueError(f"unknown game {game!r}; known: {list(GAME_NAMES)}")
    return GAME_CLASSES[game]({k: (0 if v is None else v) for k, v in params.items()})


# -- our agents as OpenSpiel bots -----------------------------------------------------------
class AgentBot(pyspiel.Bot):
    """An agent of the suite (``act(observation, view)``) playing one seat of a
    :class:`RummyGame` as a ``pyspiel.Bot``.

    At each decision the bot copies the state's record into its own env (a raw AEC env of
    the game's options) and asks the agent exactly as ``rummy_agents.arena.play`` does: the
    seat's observation dict and a ``SeatView`` (3- and 4-player Gin: the 2-player hand the seat
    plays, ``seat_at_tables``). Nothing else of the record reaches the agent.
    """

    def __init__(self, agent: Any, game: RummyGame, player: int) -> None:
        pyspiel.Bot.__init__(self)
        from rummy_agents.table_seat import seat_at_tables
        from rummy_env.envs.view import SeatView

        eng = game._engine
        self._engine = eng
        self._env = rummy_env.ENV_MODULES[eng.name].raw_env(**eng.options)
        self._env.reset(seed=0)  # the env's checks need a dealt game; the records replace it
        self._player = player
        self._name = eng.agents[player]
        self._view = SeatView(self._env, self._name)
        self.agent = seat_at_tables(agent) if self._view.plays_tables else agent

    def step(self, state: RummyState) -> int:
        """The agent's action in ``state`` (its seat must be to act).

        Raises:
            ValueError: if ``state`` is not a state of this bot's game and seat to act, or the
                agent chose an illegal action.
        """
        if not isinstance(state, RummyState) or state._c.eng is not self._engine:
            raise ValueError(f"state must be a state of {self._engine.name} with these options")
        if state.current_player() != self._player:
            raise ValueError(
                f"player {self._player} is not to act (current player {state.current_player()})"
            )
        c = state._c
        g = self._env.game
        g.states[0] = c.rec[0]  # type: ignore[index]
        g.masks[0] = c.mask[0]  # type: ignore[index]
        self._env.agent_selection = self._name
        obs = self._env.observe(self._name)
        a = int(self.agent.act(obs, self._view))
        if not (0 <= a < obs["action_mask"].shape[0]) or obs["action_mask"][a] != 1:
            raise ValueError(
                f"agent {getattr(self.agent, 'name', '?')} chose illegal action {a} "
                f"for player {self._player}"
            )
        return a

    def restart_at(self, state: RummyState) -> None:
        """Nothing to reset: the agent decides from each state's observation."""

    def inform_action(self, state: RummyState, player_id: int, action: int) -> None:
        """Other players' moves reach the agent through the next observation."""

    def provides_policy(self) -> bool:
        """No policy, only actions."""
        return False


def as_bot(agent_or_spec: Any, game: RummyGame, player: int, seed: int | None = None) -> AgentBot:
    """An agent as a ``pyspiel.Bot`` playing seat ``player`` of ``game``.

    Args:
        agent_or_spec: an agent spec of our registry (``"greedy"``, ``"ismcts@iterations=50"``,
            built with ``rummy_agents.arena.registry.make_agent(spec, seed, game)``) or an
            object with ``act(observation_dict, view)``.
        game: a game of this module (``pyspiel.load_game("rummy_env_...")``).
        player: the seat it plays.
        seed: the agent's seed (specs only).

    Raises:
        TypeError: for a game that is not one of this module's, or an agent without ``act``.
        ValueError: for a seat out of range or an unknown spec.
    """
    if not isinstance(game, RummyGame):
        raise TypeError(f"game must be a game of this module (rummy_env_*), got {game!r}")
    n = game.num_players()
    if type(player) is not int or not 0 <= player < n:
        raise ValueError(f"player must be a seat 0..{n - 1}, got {player!r}")
    if isinstance(agent_or_spec, str):
        from rummy_agents.arena.registry import make_agent

        agent = make_agent(agent_or_spec, seed, game._engine.name)
    else:
        agent = agent_or_spec
        if not callable(getattr(agent, "act", None)):
            raise TypeError(
                f"agent_or_spec must be an agent spec or have act(observation, view), got {agent!r}"
            )
    return AgentBot(agent, game, player)


def ismcts_bot(
    game: RummyGame,
    max_simulations: int = 100,
    seed: int | None = None,
    uct_c: float = 2.0,
    rollouts: int = 1,
    max_world_samples: int = -1,
) -> Any:
    """OpenSpiel's Python ``ISMCTSBot`` (``open_spiel.python.algorithms.ismcts``) with random
    rollouts, able to play through ``evaluate_bots`` (which calls ``restart_at``, a method
    OpenSpiel's ``ISMCTSBot`` lacks: the search starts afresh at every decision anyway).

    Args:
        game: a game of this module.
        max_simulations: searches per decision.
        seed: seeds the bot's numpy stream, which draws its rollouts and its sampled worlds
            (a seeded bot plays a game the same way every time).
        uct_c: the UCT exploration constant.
        rollouts: random rollouts per leaf (``RandomRolloutEvaluator``); 0: leaves are worth 0.
        max_world_samples: ``ISMCTSBot``'s limit on sampled worlds (-1: a new one each time).

    Raises:
        ValueError: for ``max_simulations < 1`` or ``rollouts < 0``.
    """
    from open_spiel.python.algorithms import ismcts, mcts

    if type(max_simulations) is not int or max_simulations < 1:
        raise ValueError(f"max_simulations must be an integer >= 1, got {max_simulations!r}")
    if type(rollouts) is not int or rollouts < 0:
        raise ValueError(f"rollouts must be an integer >= 0, got {rollouts!r}")
    rng = np.random.RandomState(seed)
    n = game.num_players()

    class _ZeroEvaluator:
        def evaluate(self, state: Any) -> np.ndarray:
            return np.zeros(n)

        def prior(self, state: Any) -> list[tuple[int, float]]:
            legal = state.legal_actions()
            return [(a, 1.0 / len(legal)) for a in legal]

    evaluator = mcts.RandomRolloutEvaluator(rollouts, rng) if rollouts else _ZeroEvaluator()

    class _Bot(ismcts.ISMCTSBot):
        def restart_at(self, state: Any) -> None:
            self.reset()

        def inform_action(self, state: Any, player_id: int, action: int) -> None:
            pass

    bot = _Bot(
        game, evaluator, uct_c, max_simulations, max_world_samples=max_world_samples,
        random_state=rng,
    )  # fmt: skip
    # OpenSpiel's bot samples worlds with a fresh, unseeded UniformProbabilitySampler: draw
    # them from the bot's seeded stream instead, so a seeded bot plays a game the same way
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, rng.uniform))
    return bot


__all__ = [
    "GAME_CLASSES",
    "GAME_NAMES",
    "SHORT_NAMES",
    "AgentBot",
    "Bounds",
    "FiveHundredRumGame",
    "GinRummyGame",
    "RummyGame",
    "RummyObserver",
    "RummyState",
    "Rummy51Game",
    "as_bot",
    "deal_seed",
    "ismcts_bot",
    "load_game",
    "options_from_params",
    "parameter_specification",
]
