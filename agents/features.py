"""Observation features for learned agents, computed from what the seat observes.

A learned policy reads ``concat(observation, features(observation))``. Features are pure
functions of the seat's own observation vector (never of hidden state), so an agent that was
trained with them can compute them again at play time from the PettingZoo observation.

- ``"none"``: no extra features (any game).
- ``"gin_deadwood"`` (Gin Rummy): the exact minimum deadwood after each possible discard of the
  hand (11 cards: the hand itself; 10 cards: the hand plus the top discard, i.e. what taking the
  discard would allow), scaled by 1/100 with 1.0 for cards that cannot be discarded, plus the
  deadwood of the 10-card hand now and the best deadwood reachable by taking the top discard.
  A second card plane holds, at the top discard only, what taking it gains: (deadwood now -
  best deadwood after taking it) / 100 (10-card hands; 0 elsewhere). The rule-based agents
  compute exactly these numbers; a small network learns much faster when it does not have to
  rediscover the meld arithmetic.
- ``"joker_cards"`` (500 Rum and Rummy 51, any player count): six 52-wide planes, one entry
  per natural card, holding what the rule-based discards and draws are decided on (the helpers
  of :mod:`rummy_agents.rum_rollouts`): the card is in the hand and makes a three-card meld with the
  rest of it (a joker may fill a place); how close it sits to the rest of the hand and to the
  cards the next player is known to hold (same rank 4, same suit one rank away 3, two away 1;
  / 16); it lays off on a table meld or (Rummy 51) takes a joker's place there; the top
  discard (one-hot); and the top discard again where it makes a three-card meld with the hand.
  The game and layout are recognised from the observation's width, which only 500 Rum with 3
  players and 54 cards and with 4 players and 52 cards share: those two are refused. Cloning
  the compiled ``heuristic`` on 600k Rummy 51 decisions, held-out agreement reached 92.6% in 4
  passes with these planes, against 84.3% in 15 passes without them.
- ``"joker_cards_out"`` (500 Rum and Rummy 51): ``joker_cards`` plus three numbers about going
  out, from :func:`fewest_left`, the fewest cards the hand can hold before its discard once the
  turn's new melds and lay-offs are down (Rummy 51: an opening must reach 51 points first, the
  default threshold is assumed; 500 Rum: melding every card goes out too, as with the default
  ``going_out``): in the play phase, [whether the hand goes out this turn, that count /
  14, the same count / 14]; in the draw phase, [whether taking the top discard lets it go out,
  the count with the top discard / 14, the count without drawing / 14]; zeros otherwise (500
  Rum's "Rummy!" offers among them). A rule such as ``greedy_plus@hold_melds=0`` (keep new
  melds in hand until the turn that goes out) can be read from the first; the
  ``joker_cards`` planes alone cannot tell it.
- ``"joker_cards_plan"`` (500 Rum and Rummy 51): ``joker_cards_out`` plus two card planes that
  ``greedy``'s discards are ordered by: each held card's points in hand / the highest (Rummy
  51: its penalty / 25, :data:`R51_VALUES`; 500 Rum: its value / 15, :data:`R500_VALUES`, the
  default values), and the copies of each card in the hand's free arrangement
  (:func:`free_arrangement_by`: the new melds leaving the fewest of those points) / 2.
- ``"joker_cards_melds"`` (500 Rum and Rummy 51): ``joker_cards_plan`` plus a template plane,
  one entry per ``MELD[t]`` action (685): in the play phase, 1 for each new meld of the arrangement
  :func:`fewest_left` finds (the turn's new melds that leave the fewest cards, so the melds that
  go out when the hand can), zeros otherwise. A policy reads which meld to lay from it instead
  of learning 685 templates' arithmetic (:func:`meld_planes` aligns it with the actions).
  Cloning ``greedy@hold_open=3``, the meld choice was where the clone lost most: playing the
  teacher's melds and the clone's other moves lifted the clone from +1.5 to +10.8 penalty
  points a hand against ``greedy`` (the teacher: +12.9).
- ``"joker_cards_takes"`` (500 Rum): ``joker_cards_melds`` plus a plane of 108 entries, one per
  discard pile depth (``TAKE_DISCARD[d]``; entries past the deck's size stay 0): in the draw
  phase and on a "Rummy!" offer, what taking the pile down to depth ``d`` adds to the hand's
  free arrangement (:func:`take_gain`, ``greedy``'s draw rule without the table's lay-offs) /
  100, clipped to [-1, 1]; -1 where the deepest card taken melds with nothing (no three-card
  meld with the hand and the cards above it, no table meld takes it). Cloning
  ``greedy@hold_melds=3`` with ``joker_cards_out``, the clone missed 49% of the teacher's takes
  from the pile, most of them deep (2026-11-24).
- ``"joker_cards_discards"`` (500 Rum): ``joker_cards_takes`` plus two card planes, one entry
  per natural (``DISCARD[c]``). In the play phase, for each natural in the hand, ``greedy``'s
  score of discarding it (:func:`~rummy_agents.rum_rollouts.greedy_discard_score`: its value less
  what it gives the table, the pile and the next player, and breaks in the hand) relative to
  the best, ``1 + clip((score - best) / 10, -1, 0)``: the first plane over every held natural
  (1 for the card ``greedy`` throws, among ties; 0 for cards 10 points worse or not held), the
  second over the cards the hand's free arrangement leaves (the best discard that keeps its
  melds whole, as ``greedy@hold_melds`` throws while it holds them; 0 for melded cards); zeros
  outside the play phase. The greedy discard weighs a card's near cards with other weights and
  caps than the closeness planes, and also whether it melds with the discard pile, which no
  plane shows. Cloning ``greedy@hold_melds=3`` with the first plane alone, the clone's
  discards agreed on 85.4% (from 79.6% without it); of the rest, a third were ties and a third
  the teacher keeping its melds whole.
- ``"joker_cards_planner"`` (500 Rum): ``joker_cards_discards`` plus a template plane (685)
  and a one-hot (12). The plane holds, in the play phase and after a "Rummy!" call, 1 at each
  new meld of ``greedy``'s plan for the turn (:class:`rummy_agents.rum_greedy.MeldPlanner`: the
  most points melded, lay-offs onto the table and onto the new melds counted, a taken card
  owed to a meld melded), where the ``joker_cards_melds`` plane marks the melds leaving the
  fewest cards; it is gated onto the MELD actions. The one-hot, in every phase but the hand's
  end, is the fewest cards an opponent holds (0 to 10, then 11 or more). Clones of
  ``greedy@hold_melds=3`` on ``joker_cards_discards`` kept their melds in hand where the
  teacher lays them because an opponent is down to 3 cards (1,103 of the 1,450 decisions in
  200 games where one of them melded and the other did something else), and chose other
  melds than its plan in 9% of their melds; playing the plan's first meld whenever the clone
  melded lifted it from 56.7% to 60.3% of 300 games to 500 against ``greedy``. Widened to
  these planes and cloned 3 more rounds, the clone won 65.8% of 2,000 games to 500
  (2026-11-24).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from numba import njit

from rummy_agents.rum_rollouts import closeness, greedy_discard_score, melds_with_hand
from rummy_env.core.jmelds import (
    JOKER,
    NUM_TEMPLATES,
    TPL_A,
    TPL_B,
    TPL_C,
    TPL_KIND,
    TPL_WIN,
    feasible_templates,
    hand_masks,
    pos_card,
    template_has_natural,
    template_needs,
)
from rummy_env.core.melds import (
    GROUP_NOPT,
    GROUP_OPTS,
    INF_DEADWOOD,
    SPREAD,
    SUIT_DEADWOOD,
    min_deadwood,
    min_deadwood_per_discard,
)
from rummy_env.rules.five_hundred_rum.kernels import C_SIZE
from rummy_env.rules.five_hundred_rum.kernels import card_value as rum_card_value
from rummy_env.rules.rummy51.kernels import TPL_VAL, card_penalty, give_template, take_template

FEATURES = (
    "none",
    "gin_deadwood",
    "joker_cards",
    "joker_cards_out",
    "joker_cards_plan",
    "joker_cards_melds",
    "joker_cards_takes",
    "joker_cards_discards",
    "joker_cards_planner",
)
_OUT_SETS = ("joker_cards_out", "joker_cards_plan", "joker_cards_melds", "joker_cards_takes",
             "joker_cards_discards", "joker_cards_planner")  # fmt: skip
_PLAN_SETS = ("joker_cards_plan", "joker_cards_melds", "joker_cards_takes",
              "joker_cards_discards", "joker_cards_planner")  # fmt: skip
_MELD_SETS = ("joker_cards_melds", "joker_cards_takes", "joker_cards_discards",
              "joker_cards_planner")  # fmt: skip
_TAKE_SETS = ("joker_cards_takes", "joker_cards_discards", "joker_cards_planner")
_DISCARD_SETS = ("joker_cards_discards", "joker_cards_planner")
"""Names accepted by :func:`feature_size` and :func:`add_features`."""

_GIN_FEATURES = 106  # 52 per-discard, now, best after taking, 52 take-gain plane
_JOKER_GAMES = ("five_hundred_rum", "rummy51")
_JOKER_FEATURES = 6 * 52  # melds, own closeness, next's closeness, table fit, top, top melds
_OUT_FEATURES = 3  # goes out, fewest cards left (with the top discard), without drawing
_PLAN_FEATURES = 2 * 52  # each held card's penalty, copies in the free arrangement
_TAKE_FEATURES = 108  # one per discard pile depth, up to the largest deck
_DISCARD_FEATURES = 2 * 52  # greedy's discard score relative to the best: any card, leftovers
_SHORT_FEATURES = 12  # one-hot: the fewest cards an opponent holds, 0..10 and 11 or more
_PLANNER_FEATURES = NUM_TEMPLATES + _SHORT_FEATURES  # greedy's planned melds, shortest opponent
_FIT = slice(156, 208)  # the table-fit card plane among the joker_cards planes
_OUT_PIECES = ("opened", "phase", "opening_points", "taken_single")
_JOKER_PIECES = ("hand", "pile_sequence", "known", "meld_kind", "meld_cards", "meld_jokers",
                 "meld_ends")  # fmt: skip
_U1 = np.uint64(1)
# points of each card type left in hand, from each game's rules: Rummy 51 penalties, 500 Rum
# values with the default options (a zero config vector: values_5_10_15 off)
R51_VALUES = np.array([card_penalty(c) for c in range(53)], np.int64)
R500_VALUES = np.array([rum_card_value(c, np.zeros(C_SIZE, np.int64)) for c in range(53)],
                       np.int64)  # fmt: skip


@njit(cache=True)
def _gin_deadwood_features(obs, out, suit_dw, group_opts, group_nopt, spread):
    per = np.empty(52, np.int64)
    for i in range(obs.shape[0]):
        m = np.uint64(0)
        n = 0
        for c in range(52):
            if obs[i, c] > 0.5:
                m |= _U1 << np.uint64(c)
                n += 1
        top = -1
        for c in range(52):
            if obs[i, 52 + c] > 0.5:
                top = c
        for c in range(54):
            out[i, c] = 1.0
        for c in range(54, _GIN_FEATURES):
            out[i, c] = 0.0
        if n == 11:
            best = min_deadwood_per_discard(m, per, suit_dw, group_opts, group_nopt, spread)
            for c in range(52):
                if per[c] < INF_DEADWOOD:
                    out[i, c] = min(per[c], 100) / 100.0
            out[i, 52] = min(best, 100) / 100.0
            out[i, 53] = out[i, 52]
        elif n == 10:
            now = min_deadwood(m, suit_dw, group_opts, group_nopt, spread)
            out[i, 52] = min(now, 100) / 100.0
            if top >= 0 and not (m >> np.uint64(top) & _U1):
                min_deadwood_per_discard(
                    m | (_U1 << np.uint64(top)), per, suit_dw, group_opts, group_nopt, spread
                )
                best = INF_DEADWOOD
                for c in range(52):
                    if c != top and per[c] < INF_DEADWOOD:
                        out[i, c] = min(per[c], 100) / 100.0
                        best = min(best, per[c])
                out[i, 53] = min(best, 100) / 100.0
                out[i, 54 + top] = out[i, 52] - out[i, 53]


def feature_size(name: str) -> int:
    """Number of extra features of ``name``.

    Raises:
        ValueError: for an unknown feature set.
    """
    if name == "none":
        return 0
    if name == "gin_deadwood":
        return _GIN_FEATURES
    if name == "joker_cards":
        return _JOKER_FEATURES
    if name == "joker_cards_out":
        return _JOKER_FEATURES + _OUT_FEATURES
    if name == "joker_cards_plan":
        return _JOKER_FEATURES + _OUT_FEATURES + _PLAN_FEATURES
    if name == "joker_cards_melds":
        return _JOKER_FEATURES + _OUT_FEATURES + _PLAN_FEATURES + NUM_TEMPLATES
    if name == "joker_cards_takes":
        return _JOKER_FEATURES + _OUT_FEATURES + _PLAN_FEATURES + NUM_TEMPLATES + _TAKE_FEATURES
    if name == "joker_cards_discards":
        return feature_size("joker_cards_takes") + _DISCARD_FEATURES
    if name == "joker_cards_planner":
        return feature_size("joker_cards_discards") + _PLANNER_FEATURES
    raise ValueError(f"unknown features {name!r}; available: {', '.join(FEATURES)}")


def add_features(name: str, obs: np.ndarray) -> np.ndarray:
    """``obs`` with the features of ``name`` appended (a fresh float32 array).

    Args:
        name: a feature set of :data:`FEATURES`.
        obs: (B, O) or (O,) observations of one game (Gin Rummy for ``"gin_deadwood"``).

    Returns:
        (B, O + F) or (O + F,) float32.
    """
    x = np.asarray(obs, dtype=np.float32)
    single = x.ndim == 1
    x2 = x[None] if single else x
    k = feature_size(name)
    out = np.empty((x2.shape[0], x2.shape[1] + k), dtype=np.float32)
    out[:, : x2.shape[1]] = x2
    if name == "gin_deadwood":
        if x2.shape[1] < 104:
            raise ValueError("gin_deadwood needs a Gin Rummy observation (hand, discard_top)")
        _gin_deadwood_features(
            np.ascontiguousarray(x2), out[:, x2.shape[1] :], SUIT_DEADWOOD, GROUP_OPTS,
            GROUP_NOPT, SPREAD,
        )  # fmt: skip
    elif name == "joker_cards" or name in _OUT_SETS:
        offs, max_melds, retrieve = _joker_args(x2.shape[1])
        xc = np.ascontiguousarray(x2)
        w = x2.shape[1]
        _joker_card_features(xc, out[:, w : w + _JOKER_FEATURES], offs, max_melds, retrieve)
        if name != "joker_cards":
            _joker_out_features(xc, out[:, w + _JOKER_FEATURES :], offs, _out_args(w), max_melds,
                                name in _PLAN_SETS, name in _MELD_SETS,
                                R51_VALUES if retrieve else R500_VALUES)  # fmt: skip
        if name in _TAKE_SETS:
            if retrieve:
                raise ValueError(f"{name} needs a 500 Rum observation (Rummy 51 has no deep takes)")
            start = w + feature_size("joker_cards_melds")
            fit = out[:, w + _FIT.start : w + _FIT.stop]
            layout = joker_layout(w)[1]
            deck = layout.deck_size
            _joker_take_features(xc, out[:, start : start + _TAKE_FEATURES], fit, offs,
                                 _out_args(w), deck, R500_VALUES)  # fmt: skip
            if name in _DISCARD_SETS:
                melded = w + _JOKER_FEATURES + _OUT_FEATURES + 52  # copies in the arrangement
                at = start + _TAKE_FEATURES
                _joker_discard_features(xc, out[:, at : at + _DISCARD_FEATURES], fit,
                                        out[:, melded : melded + 52], offs, _out_args(w),
                                        layout.offset("pile_counts"), R500_VALUES)  # fmt: skip
            if name == "joker_cards_planner":
                _joker_planner_features(xc, out[:, w + feature_size("joker_cards_discards") :],
                                        layout)  # fmt: skip
    return out[0] if single else out


@cache
def _joker_layouts() -> dict[int, Any]:
    """Observation width -> (game, layout) of every 500 Rum and Rummy 51 player count and deck."""
    from rummy_env.encodings import five_hundred_rum as E500
    from rummy_env.encodings import rummy51 as E51

    found: dict[int, list[tuple[str, object]]] = {}
    for p in range(2, 9):
        for deck in (52, 54, 104, 108):  # 500 Rum: one or two decks, jokers or none
            lay = E500.Layout(p, deck)
            found.setdefault(lay.obs_size, []).append(("five_hundred_rum", lay))
        if p <= 6:
            lay = E51.Layout(p, 108)
            found.setdefault(lay.obs_size, []).append(("rummy51", lay))
    return {w: v[0] if len(v) == 1 else v for w, v in found.items()}


def joker_layout(width: int) -> tuple[str, object]:
    """The game and observation layout of a 500 Rum or Rummy 51 observation of ``width``.

    Raises:
        ValueError: for a width no joker-game layout has, or one two layouts share (500 Rum
            with 3 players and 54 cards, and with 4 players and 52: 1,760 wide).
    """
    hit = _joker_layouts().get(int(width))
    if hit is None:
        raise ValueError(
            f"joker_cards needs a 500 Rum or Rummy 51 observation; no layout is {width} wide"
        )
    if isinstance(hit, list):
        which = ", ".join(f"{g} with {lay.num_players} players and {lay.deck_size} cards"
                          for g, lay in hit)  # fmt: skip
        raise ValueError(f"joker_cards cannot tell apart observations {width} wide: {which}")
    return hit


@cache
def _joker_args(width: int) -> tuple[np.ndarray, int, bool]:
    """The kernel's arguments for observations of ``width``, worked out once (a training loop
    adds the features at every step): piece offsets, table slots, joker retrieval.
    """
    game, layout = joker_layout(width)
    offs = np.array([layout.offset(n) for n in _JOKER_PIECES], np.int64)
    return offs, layout.max_melds, game == "rummy51"


@njit(cache=True)
def _joker_card_features(obs, out, offs, m, retrieve):
    o_hand, o_pile, o_known, o_kind, o_cards, o_jok, o_ends = offs
    hand = np.zeros(53, np.int64)
    known = np.zeros(53, np.int64)
    for i in range(obs.shape[0]):
        for c in range(53):
            hand[c] = int(obs[i, o_hand + c] * 2.0 + 0.5)
            known[c] = int(obs[i, o_known + c] * 2.0 + 0.5)  # the next player's row
        for k in range(_JOKER_FEATURES):
            out[i, k] = 0.0
        for c in range(52):
            if hand[c] > 0:
                hand[c] -= 1
                if melds_with_hand(hand, c):
                    out[i, c] = 1.0
                hand[c] += 1
            out[i, 52 + c] = closeness(hand, c) / 16.0
            out[i, 104 + c] = closeness(known, c) / 16.0
        for j in range(m):
            base = o_cards + 52 * j
            if obs[i, o_kind + 2 * j] > 0.5:  # a group: the suits it lacks, while not full
                r = int(obs[i, o_ends + 2 * j] * 12.0 + 0.5)
                n = int(obs[i, o_jok + 14 * j] * 4.0 + 0.5)
                for s in range(4):
                    n += obs[i, base + s * 13 + r] > 0.5
                if n < 4:
                    for s in range(4):
                        if obs[i, base + s * 13 + r] < 0.5:
                            out[i, 156 + s * 13 + r] = 1.0
            elif obs[i, o_kind + 2 * j + 1] > 0.5:  # a run: the cards next to its ends
                su = -1
                for c in range(52):
                    if obs[i, base + c] > 0.5:
                        su = c // 13
                        break
                if su < 0:
                    continue
                lo = int(obs[i, o_ends + 2 * j] * 13.0 + 0.5)
                hi = int(obs[i, o_ends + 2 * j + 1] * 13.0 + 0.5)
                if lo > 1 or (lo == 1 and hi < 13):  # an ace goes low only below a 2
                    out[i, 156 + su * 13 + lo - 1] = 1.0
                if hi < 12 or (hi == 12 and lo > 0):  # ... and high only if not low already
                    out[i, 156 + su * 13 + (hi + 1) % 13] = 1.0
                if retrieve:  # Rummy 51: the natural a run's joker stands for takes it back
                    for pos in range(14):
                        if obs[i, o_jok + 14 * j + pos] > 0.5:
                            out[i, 156 + su * 13 + pos % 13] = 1.0
        v = obs[i, o_pile]
        if v > 0.0:
            top = int(v * 53.0 + 0.5) - 1
            if 0 <= top < 52:
                out[i, 208 + top] = 1.0
                if melds_with_hand(hand, top):
                    out[i, 260 + top] = 1.0


# -- going out (Rummy 51) ----------------------------------------------------------------------

_OUT_DEPTH = 32  # search levels: one per meld laid or card kept (a hand holds far fewer)
_OUT_NODES = 20000  # search nodes per position before the best count so far is returned
_R51_THRESHOLD = 51
# columns of the search's level table
# per level: pivot, next candidate, candidates, move (template, -2 kept, -1 none), its jokers
# and naturals, points and melds so far, pivot kept; _L_BEST: the best leaf's templates
_L_PIV, _L_K, _L_NF, _L_AT, _L_AJ, _L_ANAT, _L_PTS, _L_NT, _L_KEPT, _L_BEST = range(10)


@njit(cache=True)
def _leaf_left(h, kept, rem, pts, nt, need, taken, runs, n_runs, groups, n_groups, total):
    """Cards left before the discard at a leaf of :func:`fewest_left` (``h + kept``: the cards
    no new meld took; ``pts``, ``nt``: the new melds' points and number); a large number when
    the leaf's melds may not be laid (an opening short of ``need``).
    """
    if need > 0 and pts < need:
        return total if nt == 0 else 1 << 20
    for c in range(53):
        rem[c] = h[c] + kept[c]
    for q in range(n_runs):  # lay off onto each run, extending it card by card
        s, lo, hi = runs[q, 0], runs[q, 1], runs[q, 2]
        moved = True
        while moved:
            moved = False
            if hi < 12 or (hi == 12 and lo > 0):  # an ace goes high only if not low already
                c = pos_card(s, hi + 1)
                if rem[c] > 0:
                    rem[c] -= 1
                    hi += 1
                    moved = True
            if lo > 1 or (lo == 1 and hi < 13):
                c = pos_card(s, lo - 1)
                if rem[c] > 0:
                    rem[c] -= 1
                    lo -= 1
                    moved = True
            if moved or rem[JOKER] == 0:
                continue
            # a joker bridges a one-card gap to a natural beyond it
            if hi < 11 or (hi == 11 and lo > 0):
                c = pos_card(s, hi + 2)
                if rem[c] > 0:
                    rem[c] -= 1
                    rem[JOKER] -= 1
                    hi += 2
                    moved = True
                    continue
            if lo > 2 or (lo == 2 and hi < 13):
                c = pos_card(s, lo - 2)
                if rem[c] > 0:
                    rem[c] -= 1
                    rem[JOKER] -= 1
                    lo -= 2
                    moved = True
    room = nt > 0 or n_runs > 0  # a joker lays off on any run (or a group with room)
    for q in range(n_groups):
        r, suits, size = groups[q, 0], groups[q, 1], groups[q, 2]
        for s in range(4):
            if size < 4 and not (suits >> s & 1) and rem[s * 13 + r] > 0:
                rem[s * 13 + r] -= 1
                size += 1
        room = room or size < 4
    if room:
        rem[JOKER] = 0
    u = 0
    laid_off = False
    for c in range(53):
        u += rem[c]
        if rem[c] < h[c] + kept[c] and (c != taken or h[c] + kept[c] >= 2):
            laid_off = True
    if u == 0:
        # 500 Rum (need < 0) goes out by melding every card; Rummy 51 keeps a card that could
        # be laid off, to discard it (a new meld cannot spare one: the search tries its smaller
        # templates with the card kept)
        return 1 if laid_off or need < 0 else 1 << 20
    if u == 1 and 0 <= taken < 52 and rem[taken] == 1:
        # the card taken from the pile may not be discarded: keep a laid-off card as well
        return 2 if laid_off else 1 << 20
    return u


@njit(cache=True)
def fewest_left(h, need, taken, runs, n_runs, groups, n_groups, ct, cj, lv, kept, rem) -> int:
    """Fewest cards a Rummy 51 (or 500 Rum) hand can hold before its discard, once this turn's
    new melds and lay-offs are down: 1 means it goes out.

    The search is ``kernels._reach``'s: the lowest natural still undecided goes into each
    template that can take it, or is kept; at a leaf, the kept naturals are laid off onto the
    table (``runs``: suit, low and high position; ``groups``: rank, suit mask, size), a run
    growing card by card (a joker may bridge a one-card gap), and the jokers left go anywhere
    with room. Lay-offs onto the turn's own new melds beyond their templates are not searched.
    Pruned by the kept naturals no table meld could take; after ``_OUT_NODES`` nodes the best
    count so far is returned.

    Args:
        h: card counts (53 types; restored on return).
        need: opening points the new melds must reach before anything is laid (0: opened);
            -1 for 500 Rum, where melding every card goes out without a discard (the count is
            then 1 as well).
        taken: the card taken from the pile this turn (-1: none), not discardable.
        runs: (suit, low position, high position) of the table runs, first ``n_runs`` rows.
        n_runs: number of table runs.
        groups: (rank, suit mask, size) of the table groups, first ``n_groups`` rows.
        n_groups: number of table groups.
        ct: scratch, candidate templates per level (``_OUT_DEPTH`` x templates).
        cj: scratch, their jokers.
        lv: scratch, the level table (``_OUT_DEPTH`` x 9).
        kept: scratch, naturals kept (53).
        rem: scratch, cards left at a leaf (53).
    """
    return _turn_search(h, need, taken, runs, n_runs, groups, n_groups, ct, cj, lv, kept, rem,
                        False, rem, R51_VALUES)  # fmt: skip


@njit(cache=True)
def free_arrangement(h, taken, ct, cj, lv, kept, rem, best_left) -> int:
    """The hand's *free arrangement* (``greedy``'s): disjoint new melds, no lay-offs, removing
    the most penalty (A 11, 2-10 face value, J Q K 10, joker 25) with a card left that may be
    discarded. Writes the cards it leaves to ``best_left`` and returns their penalty.

    Args:
        h: card counts (53 types; restored on return).
        taken: the card taken from the pile this turn (-1: none), not discardable.
        ct: scratch, as :func:`fewest_left`'s.
        cj: scratch.
        lv: scratch.
        kept: scratch.
        rem: scratch.
        best_left: out, 53 counts.
    """
    return free_arrangement_by(h, taken, R51_VALUES, ct, cj, lv, kept, rem, best_left)


@njit(cache=True)
def free_arrangement_by(h, taken, vals, ct, cj, lv, kept, rem, best_left) -> int:
    """:func:`free_arrangement` with the points of each card type left in hand given:
    ``vals`` (53; :data:`R51_VALUES`, :data:`R500_VALUES`).
    """
    none = np.zeros((0, 3), np.int64)  # no table (C-contiguous, as fewest_left's tables)
    return _turn_search(h, 0, taken, none, 0, none, 0, ct, cj, lv, kept, rem, True, best_left,
                        vals)  # fmt: skip


@njit(cache=True)
def _turn_search(h, need, taken, runs, n_runs, groups, n_groups, ct, cj, lv, kept, rem, free,
                 best_left, vals) -> int:  # fmt: skip
    """The search of :func:`fewest_left` (``free=False``: the fewest cards left) and of
    :func:`free_arrangement` (``free=True``: the least penalty left, its cards in
    ``best_left``). Both minimise a value that only grows with the cards kept, which bounds it.
    The best leaf's new melds (templates) are left in ``lv[:, _L_BEST]`` (-1 past the last).
    """
    kinds, ta, tb, tc, twin, tval = TPL_KIND, TPL_A, TPL_B, TPL_C, TPL_WIN, TPL_VAL
    total = 0
    for c in range(53):
        total += h[c]
        kept[c] = 0
    for q in range(_OUT_DEPTH):
        lv[q, _L_BEST] = -1
    if total == 0:
        return 0
    layable = np.zeros(52, np.bool_)  # naturals some table meld could still take
    for q in range(n_runs):
        for r in range(13):
            layable[runs[q, 0] * 13 + r] = True
    for q in range(n_groups):
        if groups[q, 2] < 4:
            for s in range(4):
                layable[s * 13 + groups[q, 0]] = True
    best = total
    if free:
        best = 1 << 30
        for c in range(53):
            best_left[c] = h[c]
    rs = np.empty(13, np.int64)
    sp = np.empty(4, np.int64)
    hand_masks(h, rs, sp)
    nf0 = feasible_templates(h[JOKER], rs, sp, kinds, ta, tb, tc, twin, ct[0], cj[0])
    lv[0, _L_PTS] = 0
    lv[0, _L_NT] = 0
    d = 0
    nodes = 0
    entering = True
    while True:
        if entering:
            entering = False
            nodes += 1
            lv[d, _L_AT] = -1
            lv[d, _L_K] = 0
            lv[d, _L_NF] = 0
            lv[d, _L_KEPT] = 1  # no options unless set below
            bound = 0
            for c in range(52):
                if free:
                    bound += kept[c] * vals[c]
                elif kept[c] > 0 and not layable[c]:
                    bound += kept[c]
            if bound < best and nodes <= _OUT_NODES:
                pivot = -1
                for c in range(52):
                    if h[c] > 0:
                        pivot = c
                        break
                if pivot < 0 or d >= _OUT_DEPTH - 1:
                    if free:
                        left = _leaf_penalty(h, kept, taken, vals)
                    else:
                        left = _leaf_left(h, kept, rem, lv[d, _L_PTS], lv[d, _L_NT], need,
                                          taken, runs, n_runs, groups, n_groups, total)  # fmt: skip
                    if left < best:
                        if free:
                            for c in range(53):
                                best_left[c] = h[c] + kept[c]
                        n_best = 0
                        for q in range(d):
                            if lv[q, _L_AT] >= 0:
                                lv[n_best, _L_BEST] = lv[q, _L_AT]
                                n_best += 1
                        for q in range(n_best, _OUT_DEPTH):
                            lv[q, _L_BEST] = -1
                    best = min(best, left)
                else:
                    nf = nf0
                    if d > 0:  # the hand only shrinks: filter the parent level's templates
                        nf = 0
                        for k in range(lv[d - 1, _L_NF]):
                            t = ct[d - 1, k]
                            j = template_needs(t, h, kinds, ta, tb, tc)
                            if j >= 0:
                                ct[d, nf] = t
                                cj[d, nf] = j
                                nf += 1
                    lv[d, _L_NF] = nf
                    lv[d, _L_PIV] = pivot
                    lv[d, _L_KEPT] = 0
        pivot = lv[d, _L_PIV]
        t = lv[d, _L_AT]  # take back this level's last move
        if t >= 0:
            give_template(h, t, lv[d, _L_AJ], lv[d, _L_ANAT])
        elif t == -2:
            h[pivot] += 1
            kept[pivot] -= 1
        lv[d, _L_AT] = -1
        k, nf = lv[d, _L_K], lv[d, _L_NF]
        t = -1
        j = 0
        while k < nf:
            t, j = ct[d, k], cj[d, k]
            k += 1
            if template_has_natural(t, pivot, kinds, ta, tb, tc):
                break
            t = -1
        lv[d, _L_K] = k
        if t >= 0:
            lv[d, _L_ANAT] = take_template(h, t, j)
            lv[d, _L_AT] = t
            lv[d, _L_AJ] = j
            lv[d + 1, _L_PTS] = lv[d, _L_PTS] + tval[t]
            lv[d + 1, _L_NT] = lv[d, _L_NT] + 1
            d += 1
            entering = True
            continue
        if lv[d, _L_KEPT] == 0:
            lv[d, _L_KEPT] = 1
            h[pivot] -= 1
            kept[pivot] += 1
            lv[d, _L_AT] = -2
            lv[d + 1, _L_PTS] = lv[d, _L_PTS]
            lv[d + 1, _L_NT] = lv[d, _L_NT]
            d += 1
            entering = True
            continue
        if d == 0:
            return best
        d -= 1


def best_melds(work: tuple[np.ndarray, ...]) -> list[int]:
    """Templates of the new melds of the best arrangement that the last :func:`fewest_left` or
    :func:`free_arrangement` call on scratch buffers ``work`` (:func:`make_out_work`) found.
    """
    best = work[2][:, _L_BEST]
    return [int(t) for t in best[: int((best >= 0).sum())]]


@njit(cache=True)
def _leaf_penalty(h, kept, taken, vals) -> int:
    """Penalty of the cards ``h + kept`` a free arrangement leaves; a large number when none
    of them may be discarded.
    """
    v = 0
    ok = False
    for c in range(53):
        n = h[c] + kept[c]
        v += n * vals[c]
        if n >= 1 and (c != taken or n >= 2):
            ok = True
    return v if ok else 1 << 30


@njit(cache=True)
def make_out_work():
    """Scratch buffers of :func:`fewest_left` and :func:`free_arrangement`: ct, cj, lv, kept,
    rem.
    """
    return (
        np.empty((_OUT_DEPTH, NUM_TEMPLATES), np.int64),
        np.empty((_OUT_DEPTH, NUM_TEMPLATES), np.int64),
        np.zeros((_OUT_DEPTH, 10), np.int64),
        np.zeros(53, np.int64),
        np.zeros(53, np.int64),
    )


@cache
def _out_args(width: int) -> np.ndarray:
    """Offsets of the pieces :func:`_joker_out_features` reads (-1 for the opening pieces that
    500 Rum has not).
    """
    game, layout = joker_layout(width)
    if game == "five_hundred_rum":
        return np.array([-1 if n in ("opened", "opening_points") else layout.offset(n)
                         for n in _OUT_PIECES], np.int64)  # fmt: skip
    return np.array([layout.offset(n) for n in _OUT_PIECES], np.int64)


@njit(cache=True)
def _joker_out_features(obs, out, offs, offs2, m, plan, melds, vals):
    """The three going-out numbers in ``out[:, :3]``, with ``plan`` the two card planes of
    ``joker_cards_plan`` in ``out[:, 3:107]``, and with ``melds`` the template plane of
    ``joker_cards_melds`` after them.
    """
    o_hand, o_pile, _, o_kind, o_cards, o_jok, o_ends = offs
    o_opened, o_phase, o_points, o_taken = offs2
    ct, cj, lv, kept, rem = make_out_work()
    top_val = float(vals.max())
    hand = np.zeros(53, np.int64)
    left = np.zeros(53, np.int64)
    runs = np.zeros((m, 3), np.int64)
    groups = np.zeros((m, 3), np.int64)
    for i in range(obs.shape[0]):
        taken = -1
        for c in range(53):
            hand[c] = int(obs[i, o_hand + c] * 2.0 + 0.5)
            if obs[i, o_taken + c] > 0.5:
                taken = c
        if plan:
            free_arrangement_by(hand, taken, vals, ct, cj, lv, kept, rem, left)
            for c in range(52):
                out[i, _OUT_FEATURES + c] = vals[c] / top_val if hand[c] > 0 else 0.0
                out[i, _OUT_FEATURES + 52 + c] = (hand[c] - left[c]) / 2.0
        for k in range(_OUT_FEATURES):
            out[i, k] = 0.0
        if melds:
            for t in range(NUM_TEMPLATES):
                out[i, _OUT_FEATURES + _PLAN_FEATURES + t] = 0.0
        play = obs[i, o_phase + 1] > 0.5
        if not play and obs[i, o_phase] < 0.5:
            continue  # the hand is over
        n_runs = 0
        n_groups = 0
        for j in range(m):
            base = o_cards + 52 * j
            if obs[i, o_kind + 2 * j] > 0.5:
                r = int(obs[i, o_ends + 2 * j] * 12.0 + 0.5)
                suits = 0
                size = int(obs[i, o_jok + 14 * j] * 4.0 + 0.5)
                for s in range(4):
                    if obs[i, base + s * 13 + r] > 0.5:
                        suits |= 1 << s
                        size += 1
                groups[n_groups, 0] = r
                groups[n_groups, 1] = suits
                groups[n_groups, 2] = size
                n_groups += 1
            elif obs[i, o_kind + 2 * j + 1] > 0.5:
                su = -1
                for c in range(52):
                    if obs[i, base + c] > 0.5:
                        su = c // 13
                        break
                if su >= 0:
                    runs[n_runs, 0] = su
                    runs[n_runs, 1] = int(obs[i, o_ends + 2 * j] * 13.0 + 0.5)
                    runs[n_runs, 2] = int(obs[i, o_ends + 2 * j + 1] * 13.0 + 0.5)
                    n_runs += 1
        need = 0
        if o_opened < 0:
            need = -1  # 500 Rum
        elif obs[i, o_opened] < 0.5:
            need = _R51_THRESHOLD - int(obs[i, o_points] * _R51_THRESHOLD + 0.5)
        n = fewest_left(hand, need, taken, runs, n_runs, groups, n_groups, ct, cj, lv, kept, rem)
        if play:
            if melds:
                for q in range(_OUT_DEPTH):
                    t = lv[q, _L_BEST]
                    if t < 0:
                        break
                    out[i, _OUT_FEATURES + _PLAN_FEATURES + t] = 1.0
            out[i, 0] = 1.0 if n == 1 else 0.0
            out[i, 1] = min(n, 14) / 14.0
            out[i, 2] = out[i, 1]
            continue
        out[i, 2] = min(n, 14) / 14.0
        v = obs[i, o_pile]
        top = int(v * 53.0 + 0.5) - 1 if v > 0.0 else -1
        if top >= 0:
            hand[top] += 1
            n = fewest_left(hand, need, top, runs, n_runs, groups, n_groups, ct, cj, lv, kept,
                            rem)  # fmt: skip
            hand[top] -= 1
            out[i, 0] = 1.0 if n == 1 else 0.0
            out[i, 1] = min(n, 14) / 14.0
        else:
            out[i, 1] = out[i, 2]


@njit(cache=True)
def take_gain(hand, pile, d, vals, base_melded, ct, cj, lv, kept, rem, left) -> int:
    """What taking the discard pile down to depth ``d`` adds to the free arrangement: the points
    melded with the taken cards (``pile[: d + 1]``, top first) less ``base_melded`` (melded
    without them) less the points of taken cards left in hand, as ``greedy`` scores a take
    (without lay-offs onto the table). ``hand`` is restored on return; ``left`` receives the
    cards the arrangement leaves.
    """
    total = 0
    for k in range(d + 1):
        hand[pile[k]] += 1
    for c in range(53):
        total += hand[c] * vals[c]
    taken = pile[0] if d == 0 else -1  # a single top card may not be thrown back
    melded = total - free_arrangement_by(hand, taken, vals, ct, cj, lv, kept, rem, left)
    held = 0
    for k in range(d + 1):
        hand[pile[k]] -= 1
    for k in range(d + 1):
        c = pile[k]
        if left[c] > 0:
            left[c] -= 1
            held += vals[c]
    return melded - base_melded - held


@njit(cache=True)
def _joker_take_features(obs, out, fit, offs, offs2, deck, vals):
    """The depth plane of ``joker_cards_takes`` in ``out[:, :_TAKE_FEATURES]`` (``fit``: the
    table-fit card plane of ``joker_cards``; ``deck``: the pile sequence's length).
    """
    o_hand, o_pile = offs[0], offs[1]
    o_phase = offs2[1]
    ct, cj, lv, kept, rem = make_out_work()
    hand = np.zeros(53, np.int64)
    left = np.zeros(53, np.int64)
    pile = np.zeros(_TAKE_FEATURES, np.int64)
    for i in range(obs.shape[0]):
        for k in range(_TAKE_FEATURES):
            out[i, k] = 0.0
        # the draw phase and a "Rummy!" offer (500 Rum phases: draw, play, offer, ...)
        if obs[i, o_phase] < 0.5 and obs[i, o_phase + 2] < 0.5:
            continue
        n = 0
        while n < deck and obs[i, o_pile + n] > 0.0:
            pile[n] = int(obs[i, o_pile + n] * 53.0 + 0.5) - 1
            n += 1
        if n == 0:
            continue
        total = 0
        for c in range(53):
            hand[c] = int(obs[i, o_hand + c] * 2.0 + 0.5)
            total += hand[c] * vals[c]
        base = total - free_arrangement_by(hand, -1, vals, ct, cj, lv, kept, rem, left)
        for d in range(n):
            x = pile[d]
            for k in range(d):
                hand[pile[k]] += 1
            ok = d == 0 or x == JOKER or melds_with_hand(hand, x) or fit[i, x] > 0.5
            for k in range(d):
                hand[pile[k]] -= 1
            if not ok:
                out[i, d] = -1.0
                continue
            g = take_gain(hand, pile, d, vals, base, ct, cj, lv, kept, rem, left)
            out[i, d] = min(max(g / 100.0, -1.0), 1.0)


@njit(cache=True)
def _joker_discard_features(obs, out, fit, melded, offs, offs2, o_counts, vals):
    """The two discard planes of ``joker_cards_discards`` in ``out[:, :104]`` (``fit``: the
    table-fit card plane of ``joker_cards``; ``melded``: the copies plane of
    ``joker_cards_plan``; ``o_counts``: the offset of the pile's card counts).
    """
    o_hand, o_known = offs[0], offs[2]
    o_phase = offs2[1]
    hand = np.zeros(53, np.int64)
    nxt = np.zeros(53, np.int64)
    pile = np.zeros(53, np.int64)
    score = np.zeros(52, np.int64)
    loose = np.zeros(52, np.bool_)  # copies left over by the free arrangement
    for i in range(obs.shape[0]):
        for c in range(_DISCARD_FEATURES):
            out[i, c] = 0.0
        if obs[i, o_phase + 1] < 0.5:
            continue  # discards are made in the play phase
        for c in range(53):
            hand[c] = int(obs[i, o_hand + c] * 2.0 + 0.5)
            nxt[c] = int(obs[i, o_known + c] * 2.0 + 0.5)
            pile[c] = int(obs[i, o_counts + c] * 2.0 + 0.5)
        best = -(10**9)
        best_left = -(10**9)
        for c in range(52):
            if hand[c] > 0:
                score[c] = greedy_discard_score(hand, nxt, pile, fit[i, c] > 0.5, c, vals)
                best = max(best, score[c])
                loose[c] = hand[c] > int(melded[i, c] * 2.0 + 0.5)
                if loose[c]:
                    best_left = max(best_left, score[c])
        for c in range(52):
            if hand[c] > 0:
                out[i, c] = 1.0 + max(min((score[c] - best) / 10.0, 0.0), -1.0)
                if loose[c]:
                    out[i, 52 + c] = 1.0 + max(min((score[c] - best_left) / 10.0, 0.0), -1.0)


@cache
def _planner() -> Any:
    from rummy_agents.rum_greedy import MeldPlanner

    return MeldPlanner(False)  # the default card values, as R500_VALUES


def _joker_planner_features(obs: np.ndarray, out: np.ndarray, layout: Any) -> None:
    """The planes ``joker_cards_planner`` adds, in ``out``: in the play phase, 1 at each new
    meld of ``greedy``'s plan for the turn (:func:`rummy_agents.rum_greedy.turn_plan`: the most
    points melded, lay-offs onto the table counted; the card owed to a meld melded), and the
    same after a "Rummy!" call; and in every phase but the hand's end a one-hot of the fewest
    cards an opponent holds.
    """
    from rummy_agents.rum_greedy import _counts, obligation, table_melds, turn_plan
    from rummy_env.encodings.five_hundred_rum import PH_CALL_LAYOFF, PH_OVER, PH_PLAY

    out[:] = 0.0
    phase = obs[:, layout.offset("phase") : layout.offset("phase") + PH_OVER] > 0.5
    o = layout.offset("hand_sizes")
    short = np.rint(obs[:, o + 1 : o + layout.num_players] * 13).min(axis=1).astype(np.int64)
    rows = np.flatnonzero(phase.any(axis=1))
    out[rows, NUM_TEMPLATES + np.minimum(short[rows], _SHORT_FEATURES - 1)] = 1.0
    for i in np.flatnonzero(phase[:, PH_PLAY] | phase[:, PH_CALL_LAYOFF]):
        parts = layout.split(obs[i])
        plan = turn_plan(_planner(), _counts(parts["hand"]), table_melds(parts), obligation(parts))
        for kind, t, _ in plan.steps if plan is not None else ():
            if kind == "meld":
                out[i, t] = 1.0


def card_layout(
    game: str, features: str, obs_size: int
) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """Card planes of a game's (featured) observation and its card-indexed actions, for a
    policy's card head: (offsets of 52-wide card planes, first ids of 52-wide action blocks,
    (action id, plane offset) of actions about the card marked in a plane). Empty for games
    without a known layout.

    Args:
        game: game name.
        features: the feature set appended to the observation.
        obs_size: size of the raw observation (without features).
    """
    if game in _JOKER_GAMES and (features == "joker_cards" or features in _OUT_SETS):
        _, layout = joker_layout(obs_size)
        planes = [layout.offset(n) for n in ("hand", "known", "pile_counts")]
        planes += [obs_size + 52 * k for k in range(6)]
        if features in _PLAN_SETS:
            base = obs_size + _JOKER_FEATURES + _OUT_FEATURES
            planes += [base, base + 52]
        if features in _DISCARD_SETS:
            at = obs_size + feature_size("joker_cards_takes")
            planes += [at, at + 52]
        # DISCARD[c] (naturals; the joker's discard is left to the trunk); taking the top
        # discard (500 Rum: depth 0) is about the card of the top-discard plane
        take = layout.take_base if game == "five_hundred_rum" else layout.take_discard
        return planes, [layout.discard_base], [(take, obs_size + 208)]
    if game != "gin_rummy":
        return [], [], []
    # hand, discard_top, discard_pile, opponent_known (rummy_env.encodings.gin_rummy)
    planes = [0, 52, 104, 156]
    if features == "gin_deadwood":
        planes += [obs_size, obs_size + 54]  # deadwood after each discard, gain of taking
    # DISCARD[c], KNOCK[c]; TAKE_DISCARD is about the card of the discard_top plane
    return planes, [3, 55], [(1, 52)]


def meld_planes(game: str, features: str, obs_size: int) -> list[tuple[int, int, int]]:
    """(first action id, input offset, width) of each input plane aligned with a block of
    actions, for a policy head that adds a gated copy of the plane to those actions' logits:
    the template plane of ``joker_cards_melds`` and the ``MELD[t]`` actions (500 Rum and
    Rummy 51), with ``joker_cards_takes`` the depth plane and the ``TAKE_DISCARD[d]``
    actions (500 Rum), and with ``joker_cards_discards`` also its two discard planes, each
    with the ``DISCARD[c]`` actions of naturals; empty otherwise.

    Args:
        game: game name.
        features: the feature set appended to the observation.
        obs_size: size of the raw observation (without features).
    """
    if game not in _JOKER_GAMES or features not in _MELD_SETS:
        return []
    _, layout = joker_layout(obs_size)
    offset = obs_size + _JOKER_FEATURES + _OUT_FEATURES + _PLAN_FEATURES
    planes = [(layout.meld_base, offset, NUM_TEMPLATES)]
    if features in _TAKE_SETS:
        planes.append((layout.take_base, offset + NUM_TEMPLATES, layout.deck_size))
    if features in _DISCARD_SETS:
        at = obs_size + feature_size("joker_cards_takes")
        planes += [(layout.discard_base, at, 52), (layout.discard_base, at + 52, 52)]
    if features == "joker_cards_planner":
        at = obs_size + feature_size("joker_cards_discards")
        planes.append((layout.meld_base, at, NUM_TEMPLATES))
    return planes


class FeatureSet:
    """A learner's extra observation entries for one game: ``size`` entries appended by
    ``features(obs)`` (what ``rummy_env.wrappers.RummySingleAgentEnv`` takes as ``features``).

    Args:
        game: game name.
        name: a feature set of :data:`FEATURES`.

    Raises:
        ValueError: for an unknown game or feature set.
    """

    def __init__(self, game: str, name: str) -> None:
        if game not in ("gin_rummy", *_JOKER_GAMES):
            raise ValueError(
                f"game must be one of gin_rummy, {', '.join(_JOKER_GAMES)}, got {game!r}"
            )
        self.game = game
        self.name = name
        self.size = feature_size(name)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """``obs`` ((O,) or (B, O)) with the features appended, float32."""
        return add_features(self.name, obs) if self.name != "none" else np.asarray(obs, np.float32)

    def __repr__(self) -> str:
        return f"FeatureSet({self.game!r}, {self.name!r})"


def default_features(game: str) -> str:
    """The feature set used by default for ``game``."""
    if game == "gin_rummy":
        return "gin_deadwood"
    return "joker_cards" if game in _JOKER_GAMES else "none"


__all__ = [
    "FEATURES",
    "FeatureSet",
    "R500_VALUES",
    "R51_VALUES",
    "add_features",
    "best_melds",
    "card_layout",
    "default_features",
    "feature_size",
    "fewest_left",
    "free_arrangement",
    "free_arrangement_by",
    "joker_layout",
    "make_out_work",
    "meld_planes",
    "take_gain",
]
