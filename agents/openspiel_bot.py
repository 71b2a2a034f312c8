"""OpenSpiel's simple Gin Rummy bot as an agent of our env, from its own seat's observations.

:class:`OpenSpielSimpleBot` plays ``pyspiel.make_simple_gin_rummy_bot`` in our
``gin_rummy_v0``. It keeps an OpenSpiel ``gin_rummy`` state in lock-step with the hand it plays,
built only from what its seat sees - its observation vector (own hand, the discard pile in order,
the cards the opponent is known to hold, the stock size, the phase, the dealer flag) and its
action mask - never from the hidden state of the game:

- Its own ten cards, the upcard and every card it draws from the stock are real.
- The opponent's hidden cards are **slots** (its ten dealt cards and each of its stock draws).
  When the opponent discards a card it was not known to hold, the card is assigned to one of its
  open slots; open slots are filled with cards the bot has never seen. At every call the
  OpenSpiel state is rebuilt from the deal and the public move history with this assignment, so
  it is one world consistent with the bot's information.
- The opponent's moves between two calls are read off the observation: a stock draw lowers the
  stock, a pile draw does not; the new top of the pile is its discard; a pass of the upcard offer
  leaves the upcard and the forced stock draw (the mask) behind.

OpenSpiel's bot decides from ``state.ObservationTensor(player)`` (its hand, the upcard, the
discard pile, the stock size, the knock card, the opponent's laid melds) plus its own legal
actions, which depend on its own hand only, so it plays exactly as it would in the real deal; the
test ``tests/test_openspiel_bot.py`` checks this against a lock-step copy of the real deal.
After every rebuild the agent checks that the OpenSpiel state shows exactly what the observation
shows (own hand, pile in order, stock size, phase); a mismatch raises in ``strict`` mode.

**Which engine's rules decide.** Our env is the referee: it deals, checks legality, ends and
scores the hand. The OpenSpiel state only serves the bot's decisions, and the bot's action is
mapped into ours:

============================  ===================================================
OpenSpiel                     ours
============================  ===================================================
DrawUpcard / DrawStock / Pass TAKE_DISCARD / DRAW_STOCK / PASS (upcard offer)
discard card ``c``            DISCARD[c]
Knock, then discard ``c``     KNOCK[c] (with ``auto_meld`` the hand is then laid
                              out and scored by our engine; the bot's meld
                              declarations are not used)
Knock at the wall             TAKE_DISCARD of the fiftieth-card offer
                              (``fiftieth_card_action=True``), then KNOCK[c]
Pass at the wall              PASS
============================  ===================================================

Rule differences (see ``tests/test_openspiel_diff.py``) and what the agent does:

- Discarding the card just taken from the pile is legal in OpenSpiel, forbidden by our default
  rules (``allow_discard_of_drawn_upcard=False``). The simple bot only does it when it takes an
  upcard that lets it knock and then knocks with that very card. The agent then knocks with the
  legal card that leaves the least deadwood (then the highest value), or, if no other knock is
  legal, discards the least-deadwood card (and clears the knock the bot had planned); every
  such replacement is counted in ``departures["discard_taken_card"]``, and the tracked
  OpenSpiel history records the move played, not the bot's. With
  ``allow_discard_of_drawn_upcard=True`` nothing is replaced.
- OpenSpiel's 11-card deadwood is an upper bound of the exact value: the bot may decline a knock
  that our rules allow (it then discards); it never knocks where ours forbids it.
- Stock end: OpenSpiel always has the "wall" (the last discard may be taken only to knock). Our
  standard rules end the hand as dead with 2 stock cards, so the bot is never asked; with
  ``fiftieth_card_action=True`` our offer (made only when a knock is possible) is the wall.
- Scoring (equal-deadwood undercut, Oklahoma spade doubling, gin and undercut bonuses) is ours.
- OpenSpiel ends a game after 50 draws from the pile or a repeated pick-up/discard of one card;
  if its state ends while our hand goes on, the agent falls back to
  :class:`rummy_agents.gin_rummy_rules.GinRummySimpleAgent` for the rest of the hand
  (``departures["openspiel_over"]``).

Cross-play results against it are in ``docs/agents.md``.

Supported configurations: two players, the ten-card deal with an upcard, ``auto_meld=True``;
any knock limit, Oklahoma, ``fiftieth_card_action``, ``allow_discard_of_drawn_upcard``, hand or
match episodes (a new hand is recognised from the observation).

Example:
    >>> from rummy_env import gin_rummy_v0
    >>> from rummy_agents.base import SeatView
    >>> env = gin_rummy_v0.raw_env()
    >>> env.reset(seed=0)
    >>> bot = OpenSpielSimpleBot()
    >>> a = bot.act(env.observe(env.agent_selection), SeatView(env, env.agent_selection))

"""

from __future__ import annotations

import copy
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rummy_agents.base import legal_actions
from rummy_env.core.melds import (
    GIN_VALUES,
    GROUP_NOPT,
    GROUP_OPTS,
    SPREAD,
    SUIT_DEADWOOD,
    min_deadwood,
)
from rummy_env.encodings import gin_rummy as E

try:  # pragma: no cover - exercised when open-spiel is installed
    import pyspiel
except ImportError:  # pragma: no cover
    pyspiel = None

# ours: suit c d h s = 0 1 2 3; OpenSpiel: s c d h = 0 1 2 3; ranks agree
_OS_SUIT = (1, 2, 3, 0)
OUR_TO_OS = np.array([_OS_SUIT[c // 13] * 13 + c % 13 for c in range(52)], dtype=np.int64)
"""(52,) OpenSpiel card index of each of our card ids."""
OS_TO_OUR = np.argsort(OUR_TO_OS)
"""(52,) our card id of each OpenSpiel card index."""

STOCK_START = 31
_OFFS = E.piece_offsets(True)


class BridgeDesync(RuntimeError):
    """The observation cannot be explained by the tracked OpenSpiel hand."""


class OpenSpielOver(BridgeDesync):
    """OpenSpiel's game ended (its 50 pile draws or repeated-move rule) while ours goes on."""


def _require_pyspiel() -> Any:
    if pyspiel is None:
        raise ImportError("OpenSpielSimpleBot needs open-spiel: pip install open-spiel")
    return pyspiel


def _dw(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return int(min_deadwood(np.uint64(m), SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD))


@dataclass
class PublicView:
    """What one observation shows (our card ids).

    Attributes:
        hand: own cards.
        pile: discard pile, bottom first.
        opp_known: cards the opponent is known to hold.
        stock: stock size.
        phase: ``PH_*`` phase.
        dealer: the observer dealt this hand.
        knock_limit: the hand's knock limit.
        mask: the action mask.
    """

    hand: frozenset[int]
    pile: tuple[int, ...]
    opp_known: frozenset[int]
    stock: int
    phase: int
    dealer: bool
    knock_limit: int
    mask: np.ndarray

    @property
    def forced_stock(self) -> bool:
        """The draw is the forced stock draw after both players passed the upcard."""
        return self.phase == E.PH_DRAW and not self.mask[E.TAKE_DISCARD]

    @classmethod
    def parse(cls, observation: Mapping[str, Any]) -> PublicView:
        """Decode an observation dict of ``gin_rummy_v0`` (automatic melds)."""
        obs = np.asarray(observation["observation"], dtype=np.float64)
        mask = np.asarray(observation["action_mask"])
        if obs.shape[-1] != E.observation_size(True):
            raise ValueError(
                f"OpenSpielSimpleBot needs auto_meld=True observations of size "
                f"{E.observation_size(True)}, got {obs.shape[-1]}"
            )
        o = _OFFS
        hand = frozenset(np.flatnonzero(obs[o["hand"] : o["hand"] + 52] > 0.5).tolist())
        known = obs[o["opponent_known"] : o["opponent_known"] + 52]
        pv = obs[o["discard_pile"] : o["discard_pile"] + 52]
        cards = np.flatnonzero(pv > 0)
        depth = np.rint((1.0 - pv[cards]) * 52.0).astype(np.int64)
        pile = tuple(int(c) for c in cards[np.argsort(-depth, kind="stable")])
        return cls(
            hand=hand,
            pile=pile,
            opp_known=frozenset(np.flatnonzero(known > 0.5).tolist()),
            stock=int(round(obs[o["stock_size"]] * STOCK_START)),
            phase=int(np.argmax(obs[o["phase"] : o["phase"] + E.NUM_PHASES])),
            dealer=bool(obs[o["is_dealer"]] > 0.5),
            knock_limit=int(round(obs[o["knock_limit"]] * 10)),
            mask=mask,
        )


@dataclass
class _Hand:
    """The tracked hand: the deal and the public history, opponent cards as slots."""

    me: int  # OpenSpiel player id of the bot (0: non-dealer, 1: dealer)
    own_deal: list[int]  # our ids
    upcard: int
    # events: ("act", os_player, os_action) | ("draw", os_player, card or slot index)
    events: list[tuple[str, int, int]] = field(default_factory=list)
    slots: list[int | None] = field(default_factory=lambda: [None] * 10)
    own_draws: list[int] = field(default_factory=list)
    opp_taken: set[int] = field(default_factory=set)  # taken from the pile, still held

    @property
    def opp(self) -> int:
        return 1 - self.me


class OpenSpielSimpleBot:
    """OpenSpiel's ``SimpleGinRummyBot`` playing from its seat's observations.

    Args:
        seed: unused (the OpenSpiel bot is deterministic); accepted for the arena's registry.
        strict: raise :class:`BridgeDesync` when an observation does not match the tracked
            OpenSpiel state (default: start tracking afresh and count ``departures["desync"]``).

    Attributes:
        departures: counts of every place where the OpenSpiel bot's choice could not be played
            as is (see the module docstring).
        decisions: decisions taken.
        state: the OpenSpiel state of the last decision (one world consistent with the bot's
            information), for tests.
    """

    name = "openspiel_simple"

    def __init__(self, seed: int | None = None, strict: bool = False) -> None:
        _require_pyspiel()
        self.seed = seed
        self.strict = strict
        self.departures: Counter[str] = Counter()
        self.decisions = 0
        self.state: Any = None
        self._game: Any = None
        self._game_key: tuple[int, ...] | None = None
        self._bots: dict[int, Any] = {}
        self._hand: _Hand | None = None
        self._fallback: Any = None

    # -- public -----------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget the tracked hand (a new hand is also recognised automatically)."""
        self._hand = None
        self.state = None

    def act(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """Choose the OpenSpiel simple bot's action, mapped into our action ids.

        Args:
            observation: the PettingZoo observation dict of the seat to act.
            view: the seat's :class:`rummy_agents.base.SeatView` (its ``config`` sets the OpenSpiel
                game parameters; without a view the defaults and the observed knock limit are
                used).

        Returns:
            A legal action id.

        Raises:
            ValueError: for an unsupported configuration or a mask without legal actions.
            BridgeDesync: in ``strict`` mode, when the observation contradicts the tracked hand.
        """
        config = getattr(view, "config", None)
        self._check_config(config)
        pv = PublicView.parse(observation)
        legal_actions(pv.mask)  # raises on an empty mask
        self._ensure_game(config, pv)
        self.decisions += 1
        st = self._sync(pv)
        if st is None:
            return self._fallback_act(observation, view)
        self.state = st
        a = self._decide(st, pv)
        if pv.mask[a] != 1:  # pragma: no cover - every mapping above returns a legal id
            raise RuntimeError(f"bridge produced illegal {E.action_name(a)}")
        return int(a)

    # -- setup ------------------------------------------------------------------------------
    @staticmethod
    def _check_config(config: Any) -> None:
        if config is None:
            return
        if getattr(config, "eleven_card_deal", False):
            raise ValueError("OpenSpiel's gin_rummy has no eleven-card deal")
        if not getattr(config, "auto_meld", True):
            raise ValueError("OpenSpielSimpleBot needs auto_meld=True")
        if getattr(config, "num_players", 2) != 2:
            raise ValueError("OpenSpielSimpleBot plays two-player Gin Rummy only")

    def _ensure_game(self, config: Any, pv: PublicView) -> None:
        ps = _require_pyspiel()
        okla = bool(getattr(config, "oklahoma", False))
        limit = int(getattr(config, "knock_limit", 10)) if config is not None else pv.knock_limit
        gin = int(getattr(config, "gin_bonus", 20))
        under = int(getattr(config, "undercut_bonus", 10))
        key = (okla, limit, gin, under)
        if key == self._game_key:
            return
        params = {"oklahoma": okla, "gin_bonus": gin, "undercut_bonus": under}
        if not okla:
            params["knock_card"] = limit
        self._game = ps.load_game("gin_rummy", params)
        self._game_key = key
        self._bots = {}
        self._hand = None

    def _bot(self, player: int) -> Any:
        if player not in self._bots:
            ps = _require_pyspiel()
            self._bots[player] = ps.make_simple_gin_rummy_bot(self._game.get_parameters(), player)
        return self._bots[player]

    def _fallback_act(self, observation: Mapping[str, Any], view: Any) -> int:
        if self._fallback is None:
            from rummy_agents.gin_rummy_rules import GinRummySimpleAgent

            self._fallback = GinRummySimpleAgent(seed=self.seed)
        return int(self._fallback.act(observation, view))

    # -- tracking ---------------------------------------------------------------------------
    def _sync(self, pv: PublicView) -> Any:
        """The OpenSpiel state at this decision (continuing the hand or starting a new one)."""
        why = ""
        if self._hand is not None:
            try:
                return self._continue(pv)
            except OpenSpielOver:
                try:  # the previous hand ended in OpenSpiel too (e.g. a pass at the wall)
                    return self._start(pv)
                except BridgeDesync:
                    self.departures["openspiel_over"] += 1
                    return None
            except BridgeDesync as e:
                why = f"continuing the hand: {e}; "
        try:
            return self._start(pv)
        except BridgeDesync as e:
            if self.strict:
                raise BridgeDesync(f"{why}as a new hand: {e}") from None
            self.departures["desync"] += 1
            warnings.warn(
                f"OpenSpielSimpleBot lost track of the hand ({why}as a new hand: {e}); "
                "GinRummySimpleAgent plays until the next hand",
                RuntimeWarning,
                stacklevel=3,
            )
            self._hand = None
            return None

    def _start(self, pv: PublicView) -> Any:
        """Start tracking at the bot's first decision of a hand."""
        if pv.stock != STOCK_START:
            raise BridgeDesync(f"first decision of a hand with {pv.stock} stock cards")
        me = 1 if pv.dealer else 0
        for b in self._bots.values():
            b.restart()
        if pv.phase == E.PH_UPCARD:
            if len(pv.pile) != 1 or len(pv.hand) != 10:
                raise BridgeDesync("upcard offer without a single upcard")
            hand = _Hand(me, sorted(pv.hand), pv.pile[0])
            if me == 1:  # the non-dealer passed
                hand.events.append(("act", 0, _os().PASS_ACTION))
        elif pv.phase == E.PH_DRAW and me == 1 and not pv.forced_stock:
            # the non-dealer took the upcard and discarded
            if len(pv.pile) != 1 or len(pv.hand) != 10 or len(pv.opp_known) > 1:
                raise BridgeDesync("dealer's first draw does not follow an upcard take")
            up = next(iter(pv.opp_known)) if pv.opp_known else pv.pile[0]
            hand = _Hand(me, sorted(pv.hand), up)
            hand.events.append(("act", 0, _os().DRAW_UPCARD_ACTION))
            hand.opp_taken.add(up)
            self._opp_discard(hand, pv.pile[0])
        else:
            raise BridgeDesync(f"no first decision of a hand in phase {E.PHASE_NAMES[pv.phase]}")
        st = self._build(hand)
        self._verify(st, pv, hand)
        self._hand = hand
        return st

    def _continue(self, pv: PublicView) -> Any:
        """Replay the opponent's moves since the bot's last decision, read off ``pv``."""
        assert self._hand is not None
        hand = copy.deepcopy(self._hand)
        st = self._build(hand)
        for _ in range(8):
            if st.is_terminal():
                raise OpenSpielOver("OpenSpiel's game is over")
            if st.is_chance_node():  # the bot's own stock draw: the new card in its hand
                new = pv.hand - self._os_hand(st, hand.me)
                if len(new) != 1:
                    raise BridgeDesync("cannot tell the card drawn from the stock")
                card = next(iter(new))
                hand.own_draws.append(card)
                hand.events.append(("draw", hand.me, card))
            elif st.current_player() == hand.me:
                break
            else:
                self._infer_opponent(st, pv, hand)
            st = self._build(hand)
        else:
            raise BridgeDesync("too many moves between two decisions")
        self._verify(st, pv, hand)
        self._hand = hand
        return st

    def _infer_opponent(self, st: Any, pv: PublicView, hand: _Hand) -> None:
        ps = _os()
        phase = st.current_phase()
        opp = hand.opp
        if phase == ps.Phase.FIRST_UPCARD:
            legal = st.legal_actions()
            if legal == [ps.DRAW_STOCK_ACTION]:  # both passed: the non-dealer's forced draw
                self._opp_draw(hand)
            elif pv.forced_stock and pv.pile == (hand.upcard,):
                hand.events.append(("act", opp, ps.PASS_ACTION))
            else:
                self._opp_take(st, hand)
        elif phase == ps.Phase.DRAW:
            if pv.stock < st.stock_size():
                self._opp_draw(hand)
            else:
                self._opp_take(st, hand)
        elif phase == ps.Phase.DISCARD:
            if not pv.pile:
                raise BridgeDesync("the opponent discarded but the pile is empty")
            self._opp_discard(hand, pv.pile[-1])
        else:
            raise BridgeDesync(f"the opponent would act in OpenSpiel phase {phase}")

    @staticmethod
    def _opp_take(st: Any, hand: _Hand) -> None:
        if st.upcard() is None:
            raise BridgeDesync("the opponent took from an empty pile")
        hand.opp_taken.add(int(OS_TO_OUR[st.upcard()]))
        hand.events.append(("act", hand.opp, _os().DRAW_UPCARD_ACTION))

    @staticmethod
    def _opp_draw(hand: _Hand) -> None:
        hand.events.append(("act", hand.opp, _os().DRAW_STOCK_ACTION))
        hand.slots.append(None)
        hand.events.append(("draw", hand.opp, len(hand.slots) - 1))

    @staticmethod
    def _opp_discard(hand: _Hand, card: int) -> None:
        """The opponent discards ``card``: one it took from the pile, or an open slot's card."""
        if card in hand.opp_taken:
            hand.opp_taken.discard(card)
        else:
            if card in hand.slots:
                raise BridgeDesync(f"card {card} was already discarded from a slot")
            for k, v in enumerate(hand.slots):
                if v is None:
                    hand.slots[k] = card
                    break
            else:
                raise BridgeDesync("the opponent has no hidden card left to discard")
        hand.events.append(("act", hand.opp, int(OUR_TO_OS[card])))

    @staticmethod
    def _os_hand(st: Any, player: int) -> set[int]:
        return {int(OS_TO_OUR[c]) for c in st.hands()[player]}

    def _build(self, hand: _Hand) -> Any:
        """The OpenSpiel state of the tracked hand: deal, then the history, slots filled."""
        seen = set(hand.own_deal) | {hand.upcard} | set(hand.own_draws)
        seen |= {c for c in hand.slots if c is not None}
        pool = [c for c in range(52) if c not in seen]
        fill = iter(pool)
        slots = [c if c is not None else next(fill) for c in hand.slots]
        st = self._game.new_initial_state()
        deal = [hand.own_deal, slots[:10]] if hand.me == 0 else [slots[:10], hand.own_deal]
        for c in [*deal[0], *deal[1], hand.upcard]:
            st.apply_action(int(OUR_TO_OS[c]))
        for kind, _player, x in hand.events:
            if kind == "act":
                if st.is_chance_node() or x not in st.legal_actions():
                    raise BridgeDesync(f"history action {x} is not legal in OpenSpiel")
                st.apply_action(int(x))
            else:
                if not st.is_chance_node():
                    raise BridgeDesync("a stock draw where OpenSpiel deals no card")
                card = x if _player == hand.me else slots[x]
                st.apply_action(int(OUR_TO_OS[card]))
        return st

    def _verify(self, st: Any, pv: PublicView, hand: _Hand) -> None:
        """The OpenSpiel state shows what the observation shows."""
        ps = _os()
        me = hand.me
        if st.is_terminal() or st.is_chance_node() or st.current_player() != me:
            raise BridgeDesync("OpenSpiel is not at the bot's decision")
        if self._os_hand(st, me) != set(pv.hand):
            raise BridgeDesync("own hand differs")
        if st.stock_size() != pv.stock:
            raise BridgeDesync(f"stock {st.stock_size()} != observed {pv.stock}")
        pile = [int(OS_TO_OUR[c]) for c in st.discard_pile()]
        if st.upcard() is not None:
            pile.append(int(OS_TO_OUR[st.upcard()]))
        if tuple(pile) != pv.pile:
            raise BridgeDesync("discard pile differs")
        phase = st.current_phase()
        expect = {
            E.PH_UPCARD: ps.Phase.FIRST_UPCARD,
            E.PH_DRAW: ps.Phase.FIRST_UPCARD if pv.forced_stock else ps.Phase.DRAW,
            E.PH_DISCARD: ps.Phase.DISCARD,
            E.PH_FIFTY_OFFER: ps.Phase.WALL,
            E.PH_FIFTY_KNOCK: ps.Phase.KNOCK,
        }.get(pv.phase)
        if phase != expect:
            raise BridgeDesync(f"phase {phase} != expected {expect}")
        if pv.phase == E.PH_DRAW and pv.forced_stock:
            if st.legal_actions() != [ps.DRAW_STOCK_ACTION]:
                raise BridgeDesync("forced stock draw not mirrored")
        if pv.phase == E.PH_UPCARD and st.legal_actions() != [
            ps.DRAW_UPCARD_ACTION,
            ps.PASS_ACTION,
        ]:
            raise BridgeDesync("upcard offer not mirrored")
        if hand.opp_taken != set(pv.opp_known):
            raise BridgeDesync("opponent's known cards differ")
        if not hand.opp_taken <= self._os_hand(st, 1 - me):
            raise BridgeDesync("the opponent's known cards are not in its OpenSpiel hand")

    # -- deciding ---------------------------------------------------------------------------
    def _decide(self, st: Any, pv: PublicView) -> int:
        ps = _os()
        hand = self._hand
        assert hand is not None  # act() returned through _fallback_act when _sync found none
        bot = self._bot(hand.me)
        a = int(bot.step(st))
        phase = st.current_phase()
        if phase in (ps.Phase.FIRST_UPCARD, ps.Phase.DRAW):
            ours = {
                ps.DRAW_UPCARD_ACTION: E.TAKE_DISCARD,
                ps.DRAW_STOCK_ACTION: E.DRAW_STOCK,
                ps.PASS_ACTION: E.PASS,
            }[a]
            hand.events.append(("act", hand.me, a))
            return ours
        if phase == ps.Phase.WALL:
            if a == ps.KNOCK_ACTION and pv.mask[E.TAKE_DISCARD]:
                hand.events.append(("act", hand.me, a))
                return E.TAKE_DISCARD
            if a == ps.KNOCK_ACTION:
                self.departures["wall_knock_refused"] += 1
            hand.events.append(("act", hand.me, ps.PASS_ACTION))
            return E.PASS
        if phase == ps.Phase.DISCARD:
            if a == ps.KNOCK_ACTION:
                after = st.clone()
                after.apply_action(a)
                ours = self._knock(int(OS_TO_OUR[int(bot.step(after))]), pv)
                if ours < E.KNOCK_BASE or ours >= E.KNOCK_BASE + 52:
                    bot.restart()  # no knock after all: drop the bot's queued meld actions
            else:
                c = int(OS_TO_OUR[a])
                ours = E.DISCARD_BASE + c
                if not pv.mask[ours]:
                    self.departures["discard_taken_card"] += 1
                    ours = self._best_discard(pv, knock=False)
            # the history records the move played in our env, which may replace the bot's
            if E.KNOCK_BASE <= ours < E.KNOCK_BASE + 52:
                hand.events.append(("act", hand.me, ps.KNOCK_ACTION))
                hand.events.append(("act", hand.me, int(OUR_TO_OS[ours - E.KNOCK_BASE])))
            else:
                hand.events.append(("act", hand.me, int(OUR_TO_OS[ours - E.DISCARD_BASE])))
            return ours
        if phase == ps.Phase.KNOCK:  # the knock discard after a knock at the wall
            c = int(OS_TO_OUR[a])
            hand.events.append(("act", hand.me, a))
            return self._knock(c, pv)
        raise BridgeDesync(f"no mapping for OpenSpiel phase {phase}")  # pragma: no cover

    def _knock(self, c: int, pv: PublicView) -> int:
        if pv.mask[E.KNOCK_BASE + c]:
            return E.KNOCK_BASE + c
        self.departures["discard_taken_card"] += 1
        return self._best_discard(pv, knock=True)

    @staticmethod
    def _best_discard(pv: PublicView, knock: bool) -> int:
        """The legal knock (if ``knock`` and any) or discard leaving the least deadwood, then
        the highest value, then the highest card id.
        """
        for base in (E.KNOCK_BASE, E.DISCARD_BASE) if knock else (E.DISCARD_BASE,):
            cards = [c for c in range(52) if pv.mask[base + c]]
            if cards:
                best = min(cards, key=lambda c: (_dw(pv.hand - {c}), -int(GIN_VALUES[c]), -c))
                return base + best
        legal = np.flatnonzero(pv.mask == 1)
        return int(legal[0])


def _os() -> Any:
    return _require_pyspiel().gin_rummy


__all__ = [
    "OS_TO_OUR",
    "OUR_TO_OS",
    "BridgeDesync",
    "OpenSpielOver",
    "OpenSpielSimpleBot",
    "PublicView",
]
