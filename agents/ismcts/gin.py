"""Gin Rummy hooks of the search: a compiled heuristic rollout policy and prior, an opponent
model for the determinizations, and the knock shortcut (:data:`GIN_HOOKS`).

- **Rollouts** (:func:`gin_rollout_actions`, compiled, one batch at a time): knock as soon as
  legal (least deadwood, so gin when possible), take the top discard iff it melds in a best
  arrangement or allows a knock, discard the card leaving the least deadwood; the fiftieth card
  is taken when offered. With ``auto_meld`` (default) a ``KNOCK`` ends and scores the hand at
  once.
- **Prior** (:func:`gin_prior_at`): the same preferences as scores, which order progressive
  widening: a knock above every discard, discards by deadwood left, the top discard above the
  stock when the take rule says so.
- **Observed outcome**: the searching seat sees the card of its own stock draws, so the tree
  splits the node after its ``DRAW_STOCK`` by that card.
- **Reward scale**: the largest possible hand score (``config.hand_score_scale()``), so values
  lie in [-1, 1] (1 when the env's rewards are already normalized).
- **Belief** (:func:`gin_belief_worlds`): uniform worlds reweighted by a model of a sensible
  opponent (its hand improved during the hand, holds no card that would meld with the cards it
  passed up, and explains its last discard).
- **Knock now**: under ``knock="always"`` a legal knock is played at once, the one leaving the
  least deadwood.

Module constants are compile-time constants of the numba kernels.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rummy_agents.ismcts.hooks import (
    SEARCH_DEFAULTS,
    GameHooks,
    random_rollouts,
    resample_worlds,
    stock_draw_outcome,
)
from rummy_env.core.jit import kernel
from rummy_env.core.melds import INF_DEADWOOD
from rummy_env.core.rng import randint
from rummy_env.core.rng import random_legal as _random_legal
from rummy_env.core.validate import check_int
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy import kernels as K

_DRAW_STOCK = E.DRAW_STOCK
_TAKE = E.TAKE_DISCARD
_PASS = E.PASS
_DISCARD = E.DISCARD_BASE
_KNOCK = E.KNOCK_BASE
_PH_UPCARD = E.PH_UPCARD
_PH_DRAW = E.PH_DRAW
_PH_DISCARD = E.PH_DISCARD
_PH_FIFTY_OFFER = E.PH_FIFTY_OFFER
_PH_FIFTY_KNOCK = E.PH_FIFTY_KNOCK
_INF = INF_DEADWOOD

# ---------------------------------------------------------------------------------------------
# Rollout policy and prior


@kernel
def _gin_take_rule(hand, top, lim, tables) -> bool:
    """Take the top discard iff it melds in a best arrangement of hand + card, or it allows a
    knock (the discard may not be that card).
    """
    values = tables[4]
    with_top = hand | K.bit(top)
    whole = K.mindw(with_top, tables)
    if whole < K.mindw(hand, tables) + values[top]:
        return True
    if whole - 10 > lim:  # deadwood(h - c) >= deadwood(h) - value(c) >= deadwood(h) - 10
        return False
    for c in range(52):
        if K.has(hand, c) and K.mindw(with_top & ~K.bit(c), tables) <= lim:
            return True
    return False


@kernel
def _gin_discard_dw(hand, mask, tables, dws) -> None:
    """``dws[c]``: deadwood after discarding (or knocking with) ``c``; ``_INF`` when illegal."""
    for c in range(52):
        if mask[_DISCARD + c] or mask[_KNOCK + c]:
            dws[c] = K.mindw(hand & ~K.bit(c), tables)
        else:
            dws[c] = _INF


@kernel
def _gin_policy(rec, tables, mask, na, eps, dws) -> int:
    """The heuristic rollout action of the player to act (a legal id, -1 when none).

    Knock whenever legal (least deadwood, so gin when possible); otherwise discard the card that
    leaves the least deadwood (ties: the highest value, then the highest card id); take the top
    discard iff :func:`_gin_take_rule`; take the fiftieth card when offered; manual-meld phases
    and a fraction ``eps`` of all decisions play a uniformly random legal action.
    """
    if eps > 0.0 and randint(rec, 1 << 20) < eps * (1 << 20):
        return _random_legal(rec, mask, na)
    ph = rec.phase
    hand = rec.hands[rec.cur]
    lim = rec.knock_limit
    values = tables[4]
    if ph == _PH_UPCARD or ph == _PH_DRAW:
        if mask[_TAKE] and _gin_take_rule(hand, rec.pile[rec.pile_n - 1], lim, tables):
            return _TAKE
        if mask[_DRAW_STOCK]:
            return _DRAW_STOCK
        if mask[_PASS]:
            return _PASS
        return _random_legal(rec, mask, na)
    if ph == _PH_FIFTY_OFFER:
        return _TAKE if mask[_TAKE] else _PASS
    if ph == _PH_DISCARD or ph == _PH_FIFTY_KNOCK:
        _gin_discard_dw(hand, mask, tables, dws)
        best_c = -1
        best = _INF
        best_v = -1
        for c in range(52):
            d = dws[c]
            if d < best or (d == best and d < _INF and values[c] >= best_v):
                best = d
                best_c = c
                best_v = values[c]
        if best_c < 0:
            return _random_legal(rec, mask, na)
        if mask[_KNOCK + best_c]:
            return _KNOCK + best_c
        return _DISCARD + best_c
    return _random_legal(rec, mask, na)


@kernel
def gin_rollout_actions(states, masks, tables, na, eps, out) -> None:
    """Heuristic rollout actions for every game of a batch (``out[i] = 0`` where no action is
    legal: a finished game, on which the engine's step is a no-op).
    """
    dws = np.empty(52, np.int64)
    for i in range(states.shape[0]):
        a = _gin_policy(states[i], tables, masks[i], na, eps, dws)
        out[i] = a if a >= 0 else 0


@kernel
def gin_prior_at(states, i, tables, masks, na, out) -> None:
    """Prior scores of the legal actions of game ``i`` (higher first; ``-inf`` if illegal).

    The order of the heuristic rollout policy: a knock above every discard (less deadwood
    first), discards by deadwood left then card value, the top discard above the stock when the
    take rule says so, the fiftieth card above passing.
    """
    rec = states[i]
    mask = masks[i]
    for a in range(na):
        out[a] = 0.0 if mask[a] else -np.inf
    ph = rec.phase
    hand = rec.hands[rec.cur]
    lim = rec.knock_limit
    values = tables[4]
    if ph == _PH_UPCARD or ph == _PH_DRAW:
        if mask[_TAKE]:
            out[_TAKE] = (
                1.0 if _gin_take_rule(hand, rec.pile[rec.pile_n - 1], lim, tables) else -1.0
            )
    elif ph == _PH_FIFTY_OFFER:
        if mask[_TAKE]:
            out[_TAKE] = 1.0
    elif ph == _PH_DISCARD or ph == _PH_FIFTY_KNOCK:
        dws = np.empty(52, np.int64)
        _gin_discard_dw(hand, mask, tables, dws)
        for c in range(52):
            if dws[c] >= _INF:
                continue
            tie = 0.01 * values[c] + 0.0001 * c
            if mask[_DISCARD + c]:
                out[_DISCARD + c] = -float(dws[c]) + tie
            if mask[_KNOCK + c]:
                out[_KNOCK + c] = 1000.0 - float(dws[c]) + tie


# ---------------------------------------------------------------------------------------------
# Belief: an opponent model for the determinizations


GIN_OPPONENT_DEADWOOD = np.array(
    [17.0] * 8
    + [17.5, 17.7, 18.7, 19.6, 20.0, 20.0, 20.7, 20.9, 21.0, 21.7, 22.4, 23.0, 24.4, 25.5]
    + [27.2, 28.0, 29.7, 31.4, 33.6, 35.9, 40.0, 43.5, 47.6, 50.2]
)
"""Mean deadwood of the opponent's 10-card hand by stock size (index = cards left in the stock,
0..31) at the other player's decisions, measured over 500 hands of ``GinRummySimpleAgent``
self-play (`rummy_agents.gin_rummy_rules`); uniformly dealt hands average 53-57 throughout."""


@kernel
def gin_hand_deadwood(states, player, tables, out) -> None:
    """``out[i]``: exact deadwood of ``player``'s whole hand in game ``i``."""
    for i in range(states.shape[0]):
        out[i] = K.mindw(states[i].hands[player], tables)


@kernel(inline="always")
def _melds_with(x, h) -> bool:
    """True if card ``x`` makes a meld (group or run of three) with two cards of mask ``h``."""
    r = x % 13
    base = x - r
    n = 0
    for s in range(4):
        c = 13 * s + r
        if c != x and K.has(h, c):
            n += 1
    if n >= 2:
        return True
    lo2 = r >= 2 and K.has(h, base + r - 2)
    lo1 = r >= 1 and K.has(h, base + r - 1)
    hi1 = r <= 11 and K.has(h, base + r + 1)
    hi2 = r <= 10 and K.has(h, base + r + 2)
    return (lo2 and lo1) or (lo1 and hi1) or (hi1 and hi2)


@kernel
def gin_opponent_evidence(states, player, tables, decay, dw, ev, gap, tie) -> None:
    """Per world, how well ``player``'s (the opponent's) hand explains its visible play.

    - ``dw[i]``: deadwood of the hand.
    - ``ev[i]``: every card in the pile is one the player passed up: it discarded it, or drew
      from the stock instead of taking it. A sensible player keeps cards that make melds, so
      each pile card ``x`` that would make a meld with the hand adds ``decay ** depth(x)`` (the
      hand changed since older cards were passed).
    - ``gap[i]``, ``tie[i]``: the top card, when it is the player's last discard (the seat to
      act has not taken it), was discarded from exactly this hand plus that card. A player that
      discards to keep the least deadwood would have kept ``gap`` = deadwood(hand) - min over
      discards of the 11 cards less deadwood; ``tie`` = 1 when a card of higher value would have
      left the same deadwood (the highest such card is the usual choice).
    """
    values = tables[4]
    for i in range(states.shape[0]):
        rec = states[i]
        h = rec.hands[player]
        d = K.mindw(h, tables)
        dw[i] = d
        e = 0.0
        w = 1.0
        for j in range(rec.pile_n - 1, -1, -1):
            if _melds_with(rec.pile[j], h):
                e += w
            w *= decay
        ev[i] = e
        gap[i] = 0.0
        tie[i] = 0.0
        if rec.pile_n == 0 or rec.taken >= 0 or rec.phase == _PH_UPCARD:
            continue
        if rec.pile_n == 1 and rec.pile[0] == rec.upcard:
            continue
        x = rec.pile[rec.pile_n - 1]
        full = h | K.bit(x)
        best = d
        t = 0.0
        for c in range(52):
            if c == x or not K.has(h, c):
                continue
            dc = K.mindw(full & ~K.bit(c), tables)
            if dc < best:
                best = dc
            if dc == d and values[c] > values[x]:
                t = 1.0
        gap[i] = d - best
        tie[i] = t


@dataclass(frozen=True)
class GinBelief:
    """Parameters of the Gin opponent model behind :func:`gin_belief_worlds`.

    Attributes:
        oversample: uniform worlds drawn per world kept.
        target: mean opponent deadwood by stock size (:data:`GIN_OPPONENT_DEADWOOD`).
        evidence: log-weight per pile card that would make a meld with the opponent's hand.
        decay: evidence decay per pile position below the top.
        no_knock: log-weight against hands that could have knocked (deadwood within the
            limit) once the opponent has had a turn.
        last_gap: log-weight per deadwood point the opponent's last discard gave away.
        last_tie: log-weight when its last discard was not the highest-valued best discard.
    """

    oversample: int = 4
    target: np.ndarray = field(default_factory=lambda: GIN_OPPONENT_DEADWOOD)
    evidence: float = 2.0
    decay: float = 0.85
    no_knock: float = 2.0
    last_gap: float = 0.5
    last_tie: float = 1.0


def gin_belief_worlds(view: Any, n: int, rng: np.random.Generator, belief: GinBelief) -> Any:
    """Determinizations drawn from a simple model of a sensible opponent.

    A uniform deal of the opponent's unseen cards ignores what its play has shown: uniform
    hands keep 53-57 deadwood while a sensible player's hand falls to about 20 by mid-hand
    (:data:`GIN_OPPONENT_DEADWOOD`), so a search on uniform worlds badly underrates the
    opponent's threat to knock, and it ignores the cards the opponent passed up. Here
    ``belief.oversample * n`` uniform worlds (``view.sample_worlds``) are drawn and ``n`` are
    resampled with log-weights

    ``-beta * deadwood - evidence * ev - last_gap * gap - last_tie * tie
    - no_knock * [could have knocked]``

    (:func:`gin_opponent_evidence`), ``beta`` set by bisection so that the weighted mean
    deadwood matches ``belief.target[stock size]`` (``beta = 0`` when it is already lower).
    Every world keeps all the seat's information (only hidden cards differ). Each chosen
    world's stock is reshuffled (repeated picks differ) and gets a fresh random stream.
    """
    s0 = view.sample_worlds(1, rng).states[0]
    if int(s0["phase"]) not in (_PH_UPCARD, _PH_DRAW, _PH_DISCARD, _PH_FIFTY_OFFER):
        return view.sample_worlds(n, rng)
    big = view.sample_worlds(n * belief.oversample, rng)
    s = big.states
    opp = 1 - int(view.seat)
    stock = 52 - int(s0["deck_pos"])
    m = big.num_games
    d, ev, gap, tie = (np.empty(m, dtype=np.float64) for _ in range(4))
    gin_opponent_evidence(s, opp, K.TABLES, belief.decay, d, ev, gap, tie)
    base = -belief.evidence * ev - belief.last_gap * gap - belief.last_tie * tie
    if stock < 31:
        base -= belief.no_knock * (d <= int(s0["knock_limit"]))
    base -= base.max()
    goal = float(belief.target[min(max(stock, 0), len(belief.target) - 1)])
    d0 = d - d.min()

    def weights(beta: float) -> np.ndarray:
        lw = base - beta * d0
        return np.exp(lw - lw.max())

    w = weights(0.0)
    beta = 0.0
    if float((w * d).sum() / w.sum()) > goal:
        lo, hi = 0.0, 2.0
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            w = weights(mid)
            if float((w * d).sum() / w.sum()) > goal:
                lo = mid
            else:
                hi = mid
        beta = hi
    w = weights(beta)
    return resample_worlds(big, rng.choice(big.num_games, size=n, p=w / w.sum()), rng)


GIN_BELIEF = GinBelief()
"""The default Gin opponent model."""

# ---------------------------------------------------------------------------------------------
# Match equity

GIN_HAND_POINTS = (17.8, 13.2)
"""Mean and standard deviation of the points of a scored Gin hand: those of 14,388 scored single
hands of ``ppo_search`` (its settings of 2026-11-28) against ``simple`` and ``planner``, the
hand-points model of :func:`gin_match_equity`."""


@functools.lru_cache(maxsize=16)
def gin_match_equity(
    target: int, mean: float = GIN_HAND_POINTS[0], sd: float = GIN_HAND_POINTS[1]
) -> np.ndarray:
    """Chance of winning a Gin match to ``target`` from each pair of scores.

    ``W[a, b]`` (``target`` x ``target``) is the chance that the player with ``a`` points
    reaches ``target`` before the one with ``b`` points, when every later hand is won by either
    player with chance 1/2 and scores ``1 + NegBin`` points of the given ``mean`` and ``sd``
    (dead hands change nothing and drop out). The model is symmetric, so ``W[a, b] + W[b, a] =
    1`` and ``W[a, a] = 1/2``: an even match equity table, as backgammon players use, which
    turns a hand's result into its worth to the match (near the target a few points can be
    worth more than many). The returned array is read-only and cached.

    Args:
        target: points that win the match (at least 1).
        mean: mean points of a scored hand (more than 1).
        sd: their standard deviation (positive).

    Raises:
        ValueError: for a target below 1 or a mean or sd out of range.
    """
    target = check_int("target", target, 1)
    if not mean > 1.0:
        raise ValueError(f"mean must be a number > 1, got {mean!r}")
    if not sd > 0.0:
        raise ValueError(f"sd must be a number > 0, got {sd!r}")
    # x - 1 ~ NegBin(r, p) with mean m and variance v (v > m: over-dispersed, as measured)
    m, v = mean - 1.0, max(sd * sd, mean - 1.0 + 1e-6)
    p = m / v
    r = m * p / (1.0 - p)
    k = np.arange(target, dtype=np.float64)  # x = 1 .. target: larger hands win from anywhere
    logf = (
        np.array([math.lgamma(r + j) - math.lgamma(j + 1.0) for j in k])
        - math.lgamma(r)
        + r * math.log(p)
        + k * math.log1p(-p)
    )
    f = np.exp(logf)
    f[-1] += max(0.0, 1.0 - float(f.sum()))  # the tail x > target counts as x = target
    # padded table: a >= target wins (1), b >= target loses (0)
    w = np.zeros((2 * target, 2 * target), dtype=np.float64)
    w[target:, :target] = 1.0
    for a in range(target - 1, -1, -1):
        for b in range(target - 1, -1, -1):
            w[a, b] = 0.5 * (f @ w[a + 1 : a + 1 + target, b] + f @ w[a, b + 1 : b + 1 + target])
    out = w[:target, :target].copy()
    out.setflags(write=False)
    return out


def gin_match_values(scores: np.ndarray, target: int) -> np.ndarray:
    """(N, 2) match values in [-1, 1] of 2-player match scores (N, 2): ``2 W - 1`` by
    :func:`gin_match_equity` (1 for a seat at or above ``target``, -1 for the other).
    """
    w = gin_match_equity(int(target))
    s = np.asarray(scores, dtype=np.int64)
    a = np.minimum(s[:, 0], target - 1)
    b = np.minimum(s[:, 1], target - 1)
    e0 = np.where(s[:, 0] >= target, 1.0, np.where(s[:, 1] >= target, 0.0, w[a, b]))
    v0 = 2.0 * e0 - 1.0
    return np.stack([v0, -v0], axis=1)


# ---------------------------------------------------------------------------------------------
# The hooks


GIN_DEFAULTS = dict(SEARCH_DEFAULTS)
"""ISMCTS settings of Gin Rummy under ``"auto"``: plain SO-ISMCTS, 1000 iterations."""


def _gin_rollout(game: Any, rollout: str, eps: float) -> np.ndarray:
    if rollout == "random":
        return random_rollouts(game, rollout, eps)
    out = np.zeros(game.num_games, dtype=np.int64)
    gin_rollout_actions(game.states, game.masks, K.TABLES, game.num_actions, eps, out)
    return out


def _gin_prior(game: Any, i: int) -> np.ndarray:
    out = np.empty(game.num_actions, dtype=np.float64)
    gin_prior_at(game.states, i, K.TABLES, game.masks, game.num_actions, out)
    return out


def _gin_outcome(game: Any, i: int, action: int) -> Any:
    return stock_draw_outcome(game, i, action, E.DRAW_STOCK)


def _gin_scale(config: Any) -> float:
    if getattr(config, "reward", "raw") == "normalized":
        return 1.0
    return float(config.hand_score_scale())


def _gin_knock_now(observation: Mapping[str, Any]) -> int | None:
    mask = np.asarray(observation["action_mask"])
    knocks = np.flatnonzero(mask[E.KNOCK_BASE : E.MELD_BASE] == 1)
    if knocks.size == 0:
        return None
    obs = np.asarray(observation["observation"])
    hand = 0
    for c in np.flatnonzero(obs[:52] > 0.5):
        hand |= 1 << int(c)
    best = min(
        (int(K.mindw_check(np.uint64(hand & ~(1 << int(c))), K.TABLES)), -int(c)) for c in knocks
    )
    return E.KNOCK_BASE - best[1]


def _gin_belief(view: Any, n: int, rng: np.random.Generator) -> Any:
    return gin_belief_worlds(view, n, rng, GIN_BELIEF)


GIN_HOOKS = GameHooks(
    _gin_rollout,
    _gin_prior,
    _gin_outcome,
    _gin_scale,
    _gin_belief,
    _gin_knock_now,
    defaults=GIN_DEFAULTS,
)
"""The Gin Rummy hooks (``HOOKS["gin_rummy"]``)."""

__all__ = [
    "GIN_BELIEF",
    "GIN_DEFAULTS",
    "GIN_HAND_POINTS",
    "GIN_HOOKS",
    "GIN_OPPONENT_DEADWOOD",
    "GinBelief",
    "gin_belief_worlds",
    "gin_hand_deadwood",
    "gin_match_equity",
    "gin_match_values",
    "gin_opponent_evidence",
    "gin_prior_at",
    "gin_rollout_actions",
]
