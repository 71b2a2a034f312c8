"""Information-set Monte Carlo tree search (single-observer ISMCTS) with batched rollouts.

The search follows Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search"
(IEEE TCIAIG 2012), single-observer variant (SO-ISMCTS):

- Every iteration plays in one **determinization**: a full game state consistent with what the
  searching seat knows, drawn from ``view.sample_worlds`` (the env's sampler deals the hidden
  cards anew, uniformly). Worlds are sampled ``batch_size`` at a time. With ``belief="evidence"``
  (default) a game hook reweights them by a model of the opponent (Gin:
  :func:`gin_belief_worlds` - a sensible opponent's hand has improved during the hand, holds no
  cards that would meld with the cards it passed up, and explains its last discard); with
  ``belief="uniform"`` they are used as drawn.
- The tree is the searching seat's tree of **information sets**: a node is reached by the sequence
  of actions from the root, as the searching seat sees them. The seat's own stock draws are
  chance events it observes, so the node after its ``DRAW_STOCK`` is split by the card drawn;
  the opponent's stock draws are hidden from it and not split (the determinization supplies the
  card). The opponent's decisions are nodes of the same tree, chosen by UCB from its own point of
  view among the actions legal in the current determinization.
- Selection is UCB1 over the actions **available** in the current determinization, with
  availability counts in place of the parent's visit count (``Q + c sqrt(ln(avail) / n)``).
- **Progressive widening** with a heuristic order: at a node visited ``n`` times only the
  ``max(1, floor(widening * n ** widening_exponent))`` best actions by a cheap prior (Gin: the
  rollout policy's preferences - knock when legal, take a discard that melds, discard the card
  leaving the least deadwood) are candidates. Early visits thus follow sensible lines instead of
  trying every discard once, and with more visits every legal action is tried.
- A leaf is evaluated by a **rollout to the end of the hand in the batched compiled core**: all
  the batch's leaf states are stepped together with ``GinRummyGame.step(actions,
  autoreset=False, write_obs=False, check=False)``; actions come from a compiled heuristic
  policy (:func:`gin_rollout_actions`: knock as soon as legal, take the top discard iff it
  melds in a best arrangement or allows a knock, discard the card leaving the least deadwood)
  or uniformly random legal actions. With ``auto_meld`` (default) a ``KNOCK`` ends and scores
  the hand at once.
- The reward is the seat's hand points (the env's zero-sum rewards summed to the end of the
  hand), divided by the largest possible hand score (``config.hand_score_scale()``) so it lies
  in [-1, 1]; ``objective="win"`` uses the sign instead (+1 win, 0 dead hand, -1 loss).
- The leaves of one batch are chosen before any of their results are known; each descent adds
  its visit at once (a "virtual loss" of value 0), so the descents of a batch spread out.

The move played is the root action with the most visits (ties: the higher mean value);
``root="halving"`` instead runs sequential halving over the root actions, every action played
in the same determinizations (paired comparisons). ``knock="always"`` (default) plays a legal
knock at once (the one leaving the least deadwood, so gin when possible) instead of searching
whether to wait: in the measurements below, searched knock decisions declined too many knocks
and lost more hands. With an iteration budget and a seed the search is deterministic (same
seed, same game: same moves); a time budget stops after the first batch that ends past the
limit, so it is not.

Measured (Gin defaults, 1000 iterations, duplicate deals against ``GinSimpleAgent``, one
process on a loaded 2-core machine, 0.2-0.3 s per searched move; win % excludes dead hands):

=========================================  ===========  =============
setting (root, belief, knock, objective)   games        win %
=========================================  ===========  =============
ucb, uniform, search, points                200         45.5
ucb, evidence, search, points               200         52.0
halving, evidence, always, points           200         56.3
ucb, evidence, always, win                  200         51.0
ucb, evidence, always, points (default)     200         57.0
ucb, true opponent hand (cheating bound)    50          68.0
=========================================  ===========  =============

Final check of the defaults (``iterations=1000``) with the arena, 500 duplicate deals:
``rummy-env arena --agents ismcts,simple --deals 500 --seed 2024 --workers 2`` gives 551 wins,
448 losses, 1 dead hand: 55.2% [52.1, 58.2] (Wilson 95%; per-deal t interval 52.2-58.1), point
margin -0.37 [-1.67, 0.94] per game - it wins more hands, not more points. Against random: 99.4%
[98.2, 99.8]. A searched move takes 0.15 s on average (p95 0.20 s) on one core of the
development machine (about 9 searched moves per hand; single legal moves and knocks are
instant).

**500 Rum and Rummy 51** (hooks ``"five_hundred_rum"``, ``"rummy51"``, any number of players).
Worlds come from ``FiveHundredRumGame.sample_worlds`` / ``Rummy51Game.sample_worlds`` (the
other players' unknown cards and the stock dealt anew, the player to act keeping a legal
move; in Rummy 51 reweighted by :func:`r51_belief_worlds` against opponents who could have
opened, or still hold a meld or a card that lays off, as ``greedy`` never does). Rollouts and
the widening prior are the compiled scoring policy of :mod:`rummy_agents.rum_rollouts` (meld and lay
off whenever the mask allows, take the top discard when it melds, shed the highest card no meld
wants; in Rummy 51 close to ``greedy``'s own rules); the seat observes the card of its own
stock draws; rewards are turned into margins (own hand reward minus the mean of the others',
:func:`zero_sum`) and divided by :data:`RUM_SCALE` / :data:`R51_SCALE`. Under
``knock="always"`` the policy's melds, lay-offs, joker retrievals and "Rummy!" calls are played
without a search, at the root and inside the tree (the ``forced`` hook), so the budget goes to
draws and discards (in Rummy 51 with an anchor, the root plays the anchor's own melds,
lay-offs and retrievals instead, and when the anchor declines to meld now - ``greedy_plus``
keeps new melds in hand - the root does not search melding either: the ``unsearched`` hook).
With ``anchor=True`` (default) the game's
``greedy`` agent's move leads the root's candidates; ``root="paired"`` then compares it with the
next ``root_k - 1`` candidates of the prior on common determinizations and departs from it only
when a candidate beats it by ``paired_z`` standard errors of the paired differences. Plain UCB at
the root does not work here: the value of a discard is a small difference between hand outcomes
whose noise (rollouts to the end of a long hand) swamps it at a few hundred iterations, so UCB's
choice was close to random among sensible discards and lost to ``greedy`` (Rummy 51, 256
iterations: 32% of 50 hands; with the greedy anchor 24%). Paired rollouts cancel most of that
noise.

Measured against ``greedy`` (duplicate deals, default rules, 2 players, one process on the
shared 2-core development machine; win % of decisive hands, Wilson 95%; ``results/ARENA.md``
has the commands and every run):

=================================================  ========  =====  ===================
setting                                            game      games  win %
=================================================  ========  =====  ===================
rollout policy alone (one world per decision)      500 Rum   400    40.3 [35.6, 45.2]
first rollout policy alone (one world/decision)    Rummy 51  400    38.6 [34.0, 43.5]
ucb, 256 iterations, no anchor                     Rummy 51  50     32.0 [20.8, 45.8]
ucb, 256 iterations, no anchor, win objective      Rummy 51  50     26.5 [16.2, 40.3]
ucb, 256 iterations, greedy anchor                 Rummy 51  50     24.0 [14.3, 37.4]
paired, 256 iterations, paired_z 2                 Rummy 51  50     44.0 [31.2, 57.7]
paired, 1024 iterations                            Rummy 51  50     38.0 [25.9, 51.8]
paired, 256 iterations, root_k 2                   Rummy 51  150    49.0 [41.1, 56.9]
paired, 256 iterations, win objective              Rummy 51  200    38.5 [32.0, 45.4]
paired, 256 iterations (root_k 4)                  500 Rum   400    51.6 [46.7, 56.5]
paired, 256 iterations, root_k 2                   500 Rum   300    55.0 [49.4, 60.6]
rollout policy with greedy's rules, alone          Rummy 51  800    45.8 [42.3, 49.2]
defaults with that policy                          Rummy 51  200    56.5 [49.6, 63.2]
defaults, mixed objective (win_weight 0.5)        Rummy 51  1000   49.0 [45.9, 52.1]
defaults, max_depth 1 (no tree below the root)     Rummy 51  1000   49.3 [46.2, 52.4]
defaults, rollouts with greedy's near              Rummy 51  1000   49.6 [46.5, 52.7]
defaults, anchor="greedy_plus"                     Rummy 51  3000   51.0 [49.2, 52.8]
defaults, anchor="greedy_plus" (jokers, holds)     Rummy 51  1500   53.3 [50.8, 55.8]
=================================================  ========  =====  ===================

Final checks (other seeds than the runs above):

- 500 Rum, ``rummy-env arena --game five_hundred_rum --agents
  ismcts@iterations=256@root=paired@root_k=2,greedy --deals 250 --workers 1 --seed 2026``: 282
  wins, 216 losses, 2 drawn hands: **56.6% [52.2, 60.9]**, margin +3.10 [0.87, 5.34] points per
  hand. 0.099 s per searched move (p95 0.13 s), 0.070 s per decision counting the moves played
  without a search.
- Rummy 51, ``rummy-env arena --game rummy51 --agents ismcts,greedy --deals 500 --workers 2
  --seed 2028`` (the defaults: 256 iterations, ``root="paired"``, ``root_k=2``, ``greedy``'s own
  melds, lay-offs and joker retrievals, the rollout policy with ``greedy``'s rules and the
  belief of :func:`r51_belief_worlds`): 516 wins, 484 losses: 51.6% [48.5, 54.7], margin +0.44
  [-1.07, 1.96] penalty points per hand - even with ``greedy``, not yet better. 0.15 s per
  searched move (median 0.12 s, p95 0.32 s). Earlier versions on seed 2027: 49.1% [46.0, 52.2]
  (first rollout policy), 50.4% [47.3, 53.5] (greedy's rules, no belief); with 512 iterations
  on seed 2029: 51.2% [48.1, 54.3].

The algorithm needs only ``view.sample_worlds`` and the batched game's ``masks``, ``step``,
``kernels.step_single`` (or the game's ``step_one``) and state records (``states["cur"]``,
``states["hands_played"]``, ``states["rewards"]``); what is specific to a game (rollout policy,
prior, the chance outcomes the searcher observes, the reward scale and form, the belief model,
the knock shortcut, the moves played without a search, the anchor agent) is a
:class:`GameHooks` entry in :data:`HOOKS`, with uniformly random fallbacks for games without
one.

Example:
    >>> from rummy_env import gin_rummy_v0
    >>> from rummy_agents.base import SeatView
    >>> env = gin_rummy_v0.raw_env()
    >>> env.reset(seed=0)
    >>> agent = ISMCTSAgent(iterations=200, seed=0)
    >>> a = agent.act(env.observe(env.agent_selection), SeatView(env, env.agent_selection))

"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from rummy_agents.base import legal_actions
from rummy_agents.rum_rollouts import (
    r51_evidence,
    r51_params,
    rum_forced_at,
    rum_params,
    rum_prior_at,
    rum_rollout_actions,
    rum_unsearched,
)
from rummy_env.core.melds import INF_DEADWOOD
from rummy_env.core.rng import randint
from rummy_env.core.rng import random_legal as _random_legal
from rummy_env.encodings import gin_rummy as E
from rummy_env.rules.gin_rummy import kernels as K

OBJECTIVES = ("points", "win", "mixed")
BELIEFS = ("evidence", "uniform")
ROLLOUTS = ("heuristic", "random")
ROOTS = ("halving", "paired", "ucb")
KNOCKS = ("search", "always")

# ---------------------------------------------------------------------------------------------
# Gin Rummy: compiled rollout policy and prior (module constants are compile-time for numba)

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


@njit(cache=True)
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


@njit(cache=True)
def _gin_discard_dw(hand, mask, tables, dws) -> None:
    """``dws[c]``: deadwood after discarding (or knocking with) ``c``; ``_INF`` when illegal."""
    for c in range(52):
        if mask[_DISCARD + c] or mask[_KNOCK + c]:
            dws[c] = K.mindw(hand & ~K.bit(c), tables)
        else:
            dws[c] = _INF


@njit(cache=True)
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


@njit(cache=True)
def gin_rollout_actions(states, masks, tables, na, eps, out) -> None:
    """Heuristic rollout actions for every game of a batch (``out[i] = 0`` where no action is
    legal: a finished game, on which the engine's step is a no-op).
    """
    dws = np.empty(52, np.int64)
    for i in range(states.shape[0]):
        a = _gin_policy(states[i], tables, masks[i], na, eps, dws)
        out[i] = a if a >= 0 else 0


@njit(cache=True)
def random_rollout_actions(states, masks, na, out) -> None:
    """Uniformly random legal actions from each game's own stream (0 where none is legal)."""
    for i in range(states.shape[0]):
        a = _random_legal(states[i], masks[i], na)
        out[i] = a if a >= 0 else 0


@njit(cache=True)
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


@njit(cache=True)
def gin_hand_deadwood(states, player, tables, out) -> None:
    """``out[i]``: exact deadwood of ``player``'s whole hand in game ``i``."""
    for i in range(states.shape[0]):
        out[i] = K.mindw(states[i].hands[player], tables)


GIN_OPPONENT_DEADWOOD = np.array(
    [17.0] * 8
    + [17.5, 17.7, 18.7, 19.6, 20.0, 20.0, 20.7, 20.9, 21.0, 21.7, 22.4, 23.0, 24.4, 25.5]
    + [27.2, 28.0, 29.7, 31.4, 33.6, 35.9, 40.0, 43.5, 47.6, 50.2]
)
"""Mean deadwood of the opponent's 10-card hand by stock size (index = cards left in the stock,
0..31) at the other player's decisions, measured over 500 hands of ``GinSimpleAgent``
self-play (`rummy_agents.gin_rules`); uniformly dealt hands average 53-57 throughout."""


@njit(cache=True, inline="always")
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


@njit(cache=True)
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
    return _resample(big, rng.choice(big.num_games, size=n, p=w / w.sum()), rng)


def _resample(big: Any, idx: np.ndarray, rng: np.random.Generator) -> Any:
    """The worlds ``big[idx]`` (repeats allowed) as a new batch, each chosen world's stock
    reshuffled (repeated picks differ) and given a fresh random stream.
    """
    n = len(idx)
    worlds = type(big)(big.config, n)
    worlds.states[:] = big.states[idx]
    pos = int(big.states[0]["deck_pos"])
    worlds.states["deck"][:, pos:] = rng.permuted(worlds.states["deck"][:, pos:], axis=1)
    worlds.states["rng"] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
    worlds.masks[:] = big.masks[idx]
    return worlds


R51_OVERSAMPLE = 4
"""Rummy 51 belief: uniform worlds drawn per world kept."""
R51_NOT_OPENED = 4.0
"""Rummy 51 belief: log-weight per fact of a world ``greedy`` would never leave
(:func:`r51_evidence`: it could have opened, or could still meld or lay off, and did not)."""


def r51_belief_worlds(view: Any, n: int, rng: np.random.Generator) -> Any:
    """Rummy 51 determinizations for opponents who open as soon as they can.

    Uniform worlds give a player who has not opened a hand that reaches the 51 about as often
    as a fresh deal does, yet a player who has had a turn and did not open (``greedy`` opens as
    soon as the threshold is reachable) holds no such hand: its cards are those it kept at its
    last turn; likewise an opened player keeps no meld and (2 players) no card that lays off.
    ``R51_OVERSAMPLE * n`` uniform worlds are drawn and ``n`` resampled with log-weight
    ``-R51_NOT_OPENED`` per such fact (:func:`r51_evidence`). Each chosen world's stock is
    reshuffled (repeated picks differ) and gets a fresh random stream.
    """
    big = view.sample_worlds(n * R51_OVERSAMPLE, rng)
    ev = np.zeros(big.num_games, dtype=np.int64)
    r51_evidence(big.states, int(view.seat), int(big.config.opening_threshold), ev)
    w = np.exp(-R51_NOT_OPENED * (ev - ev.min()))
    return _resample(big, rng.choice(big.num_games, size=n, p=w / w.sum()), rng)


# ---------------------------------------------------------------------------------------------
# Game hooks


GIN_DEFAULTS = {"iterations": 1000, "root": "ucb", "root_k": 4}
"""ISMCTS settings of Gin Rummy (and games without hooks) under ``"auto"``."""
JOKER_DEFAULTS = {"iterations": 256, "root": "paired", "root_k": 2}
"""ISMCTS settings of 500 Rum and Rummy 51 under ``"auto"``: paired root comparisons of the
``greedy`` anchor's move with the prior's best other move."""


@dataclass(frozen=True)
class GameHooks:
    """What ISMCTS needs to know about one game beyond the batched engine's generic API.

    Attributes:
        rollout_actions: ``(game, rollout) -> (N,) int64`` actions of a rollout step for every
            world of a batched game (``rollout`` is ``"heuristic"`` or ``"random"``; any action
            where no action is legal).
        prior: ``(game, i) -> (num_actions,) float64`` scores (higher = expanded first) of the
            legal actions of world ``i``, or ``None`` for the action-id order.
        observed_outcome: ``(game, i, action) -> hashable | None``: what the acting (searching)
            seat learned from the chance event its own action just caused in world ``i`` (Gin:
            the card drawn from the stock), or ``None``.
        reward_scale: ``config -> float``: divides the raw rewards into [-1, 1].
        belief: ``(view, n, rng) -> worlds``: determinizations drawn from a non-uniform belief
            (``belief="evidence"``); ``None``: ``view.sample_worlds`` only.
        knock_now: ``observation -> action | None``: the move that ends the hand at once when
            one is legal (Gin: the knock leaving the least deadwood), played without a search
            under ``knock="always"``.
        zero_sum: value each player's hand rewards against the others' (own reward minus the
            mean of the others', :func:`zero_sum`) before scaling: for games whose rewards are
            not zero-sum (500 Rum points, Rummy 51 penalties).
        forced: ``(game, i) -> action`` (-1: none): a move of world ``i`` played without a
            search under ``knock="always"``, at the root and inside the tree (500 Rum, Rummy 51:
            the rollout policy's melds, lay-offs, joker retrievals and "Rummy!" calls), so the
            search spends its budget on draws and discards.
        anchor: ``seed -> agent``: the game's rule-based agent; with ``anchor=True`` its move
            leads the root's candidate order (tried first, kept on ties), so the search starts
            from it and departs from it only for a move its rollouts rate higher.
        unsearched: ``(game, i, action) -> bool``: is ``action`` (the anchor's move in world
            ``i``) of the kind ``forced`` plays without a search (Rummy 51: a meld, lay-off or
            joker retrieval)? With an anchor, such a move of the anchor is played as is at the
            root, in place of the ``forced`` hook's; when the anchor's move is another kind (it
            declines to meld now), the root's candidates leave such moves out.
        defaults: the search settings ``ISMCTSAgent`` uses when left at ``"auto"``:
            ``iterations``, ``root``, ``root_k`` (the best measured for the game).
    """

    rollout_actions: Callable[[Any, str, float], np.ndarray]
    prior: Callable[[Any, int], np.ndarray] | None = None
    observed_outcome: Callable[[Any, int, int], Any] | None = None
    reward_scale: Callable[[Any], float] = field(default=lambda config: 1.0)
    belief: Callable[[Any, int, np.random.Generator], Any] | None = None
    knock_now: Callable[[Mapping[str, Any]], int | None] | None = None
    zero_sum: bool = False
    forced: Callable[[Any, int], int] | None = None
    anchor: Callable[[int | None], Any] | None = None
    unsearched: Callable[[Any, int, int], bool] | None = None
    defaults: Mapping[str, Any] = field(default_factory=lambda: dict(GIN_DEFAULTS))


def _generic_rollout_actions(game: Any, rollout: str, eps: float) -> np.ndarray:
    """Uniformly random legal actions (every game's ``rollout="random"``)."""
    out = np.zeros(game.num_games, dtype=np.int64)
    random_rollout_actions(game.states, game.masks, game.num_actions, out)
    return out


def _gin_rollout(game: Any, rollout: str, eps: float) -> np.ndarray:
    if rollout == "random":
        return _generic_rollout_actions(game, rollout, eps)
    out = np.zeros(game.num_games, dtype=np.int64)
    gin_rollout_actions(game.states, game.masks, K.TABLES, game.num_actions, eps, out)
    return out


def _gin_prior(game: Any, i: int) -> np.ndarray:
    out = np.empty(game.num_actions, dtype=np.float64)
    gin_prior_at(game.states, i, K.TABLES, game.masks, game.num_actions, out)
    return out


def _gin_outcome(game: Any, i: int, action: int) -> Any:
    if action == E.DRAW_STOCK:
        s = game.states[i]
        return int(s["deck"][int(s["deck_pos"]) - 1])
    return None


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


GIN_BELIEF = GinBelief()
"""The default Gin opponent model."""


def _gin_belief(view: Any, n: int, rng: np.random.Generator) -> Any:
    return gin_belief_worlds(view, n, rng, GIN_BELIEF)


# 500 Rum and Rummy 51: the compiled policy of ``rummy_agents.rum_rollouts`` over each game's action
# ranges and card values (built once per config)

_RUM_PARAMS: dict[Any, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _joker_params(game: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    key = (type(game).__name__, game.config)
    params = _RUM_PARAMS.get(key)
    if params is None:
        build = r51_params if type(game).__name__ == "Rummy51Game" else rum_params
        params = _RUM_PARAMS[key] = build(game.config, game.layout)
    return params


def _joker_rollout(game: Any, rollout: str, eps: float) -> np.ndarray:
    if rollout == "random":
        return _generic_rollout_actions(game, rollout, eps)
    out = np.zeros(game.num_games, dtype=np.int64)
    lay, vals, pts = _joker_params(game)
    rum_rollout_actions(game.states, game.masks, lay, vals, pts, eps, out)
    return out


def _joker_prior(game: Any, i: int) -> np.ndarray:
    out = np.empty(game.num_actions, dtype=np.float64)
    lay, vals, pts = _joker_params(game)
    rum_prior_at(game.states, i, game.masks, lay, vals, pts, out)
    return out


def _joker_forced(game: Any, i: int) -> int:
    lay, vals, pts = _joker_params(game)
    return int(rum_forced_at(game.states, i, game.masks, lay, vals, pts))


def _joker_unsearched(game: Any, i: int, action: int) -> bool:
    return bool(rum_unsearched(game.states[i], action, _joker_params(game)[0]))


def _rum_greedy(seed: int | None) -> Any:
    from rummy_agents.rum_greedy import FiveHundredGreedyAgent

    return FiveHundredGreedyAgent(seed=seed)


def _r51_greedy(seed: int | None) -> Any:
    from rummy_agents.r51_greedy import Rummy51GreedyAgent

    return Rummy51GreedyAgent(seed=seed)


def _joker_outcome(game: Any, i: int, action: int) -> Any:
    if action == 0:  # DRAW_STOCK in both games: the card drawn
        s = game.states[i]
        return int(s["deck"][int(s["deck_pos"]) - 1])
    return None


RUM_SCALE = 100.0
"""500 Rum: hand-point margin (own points minus the opponents' mean) that counts as a full
win; margins are clipped to [-1, 1] after dividing by it."""

R51_SCALE = 100.0
"""Rummy 51: penalty margin (the opponents' mean penalty minus one's own) of a full win."""


def _rum_scale(config: Any) -> float:
    return 1.0 if getattr(config, "reward", "raw") == "normalized" else RUM_SCALE


def _r51_scale(config: Any) -> float:
    reward = getattr(config, "reward", "penalty")
    if reward == "normalized":
        return 1.0
    if reward == "payout":
        return float(config.num_players)
    return R51_SCALE


HOOKS: dict[str, GameHooks] = {
    "gin_rummy": GameHooks(
        _gin_rollout, _gin_prior, _gin_outcome, _gin_scale, _gin_belief, _gin_knock_now
    ),
    "five_hundred_rum": GameHooks(
        _joker_rollout,
        _joker_prior,
        _joker_outcome,
        _rum_scale,
        zero_sum=True,
        forced=_joker_forced,
        anchor=_rum_greedy,
        defaults=JOKER_DEFAULTS,
    ),
    "rummy51": GameHooks(
        _joker_rollout,
        _joker_prior,
        _joker_outcome,
        _r51_scale,
        r51_belief_worlds,
        zero_sum=True,
        forced=_joker_forced,
        anchor=_r51_greedy,
        unsearched=_joker_unsearched,
        defaults=JOKER_DEFAULTS,
    ),
}
GENERIC_HOOKS = GameHooks(_generic_rollout_actions)


def objective_values(
    acc: np.ndarray, objective: str, scale: float, win_weight: float = 0.5
) -> np.ndarray:
    """Rollout results (points per player) as search values in [-1, 1].

    ``"points"``: the points divided by ``scale`` (a full win's margin), clipped; ``"win"``:
    their sign; ``"mixed"``: ``win_weight`` times the sign plus the rest times the points.
    """
    points = np.clip(acc / scale, -1.0, 1.0)
    if objective == "win":
        return np.sign(acc)
    if objective == "mixed":
        return win_weight * np.sign(acc) + (1.0 - win_weight) * points
    return points


def zero_sum(acc: np.ndarray) -> np.ndarray:
    """(N, players) rewards as margins: each player's reward minus the mean of the others'."""
    p = acc.shape[1]
    if p < 2:
        return acc
    return acc - (acc.sum(1, keepdims=True) - acc) / (p - 1)


def _step_one(game: Any, i: int, a: int, acc: np.ndarray) -> tuple[bool, int, int]:
    """Apply legal action ``a`` in world ``i`` only, adding its rewards to ``acc`` (players,).

    Returns:
        (episode over, player to act, hands played).
    """
    step_one = getattr(game, "step_one", None)
    if step_one is not None:  # Gin: rewards come back with the step
        done, _trunc, cur, hands, r0, r1 = step_one(i, a)
        acc[0] += r0
        acc[1] += r1
        return bool(done), int(cur), int(hands)
    k = game.kernels
    done, _trunc, cur, hands = k.step_single(game.states, game.cfg, k.TABLES, i, a, game.masks)
    acc += game.states["rewards"][i]
    return bool(done), int(cur), int(hands)


# ---------------------------------------------------------------------------------------------
# The tree


class _Edge:
    """An action out of a node: statistics from the point of view of the node's player."""

    __slots__ = ("n", "w", "avail", "children")

    def __init__(self) -> None:
        self.n = 0  # visits (counted when the descent passes, before the value is known)
        self.w = 0.0  # sum of values for the player who chose the action
        self.avail = 0  # visits of the parent in which the action was a candidate
        self.children: dict[Any, _Node] = {}  # observed chance outcome (or None) -> node


class _Node:
    """An information set of the searching seat (or a decision of the opponent in it)."""

    __slots__ = ("player", "n", "edges", "ranked")

    def __init__(self, player: int) -> None:
        self.player = player
        self.n = 0
        self.edges: dict[int, _Edge] = {}
        self.ranked: dict[bytes, np.ndarray] = {}  # cached candidate orders (searcher's nodes)


@dataclass
class SearchStats:
    """What the last search did (for reports and tests)."""

    iterations: int = 0
    seconds: float = 0.0
    root_visits: dict[int, int] = field(default_factory=dict)
    root_values: dict[int, float] = field(default_factory=dict)
    max_depth: int = 0
    first: int | None = None  # the root action tried first (the anchor's move), if any


class ISMCTSAgent:
    """Single-observer information-set MCTS with batched determinizations and rollouts.

    Args:
        iterations: iterations (determinized descents + rollouts) per decision; ``None`` for a
            time budget only; ``"auto"`` (default): the game's (``GameHooks.defaults``: Gin
            1000, 500 Rum and Rummy 51 256).
        time_limit: seconds per decision (checked after each batch); ``None`` for none. At least
            one of ``iterations`` and ``time_limit`` must be set.
        batch_size: worlds sampled, descended and rolled out together.
        exploration: UCB constant ``c`` on values in [-1, 1].
        widening: progressive widening coefficient (candidates ``= widening * n ** exponent``);
            ``None`` disables widening (all legal actions, expanded in prior order).
        widening_exponent: progressive widening exponent.
        max_depth: deepest tree level expanded (plies below the root); ``None``: unlimited.
        rollout: ``"heuristic"`` (compiled game heuristic) or ``"random"``.
        rollout_eps: fraction of heuristic rollout decisions played at random.
        objective: ``"points"`` (hand points / largest hand score), ``"win"`` (sign) or
            ``"mixed"`` (``win_weight * sign + (1 - win_weight) * points``: a result that
            follows wins while the points part still separates moves whose rollouts end on
            the same side).
        win_weight: the sign's weight in ``objective="mixed"``, in [0, 1].
        belief: ``"evidence"`` (default: the game's belief hook, Gin: :func:`gin_belief_worlds`)
            or ``"uniform"`` (``view.sample_worlds`` as is).
        root: ``"ucb"`` (plain SO-ISMCTS, most visited root action), ``"halving"`` (sequential
            halving over the root actions on common determinizations), ``"paired"`` (the first
            ``root_k`` root actions on common determinizations, the first one kept unless
            another beats it by ``paired_z`` standard errors) or ``"auto"`` (default): the
            game's (Gin ``"ucb"``, 500 Rum and Rummy 51 ``"paired"``).
        root_k: root actions compared by ``root="paired"``; ``None`` (default): the game's
            (Gin 4, 500 Rum and Rummy 51 2).
        paired_z: standard errors by which ``root="paired"`` needs an action to beat the first.
        knock: ``"always"`` (default: whenever the game's ``knock_now`` hook offers a move that
            ends the hand, play it at once) or ``"search"`` (knocking is one of the searched
            moves).
        anchor: start the root's candidate order with the move of the game's rule-based agent
            (``True``: the ``anchor`` hook; 500 Rum and Rummy 51: ``greedy``), so the search
            refines it; or the arena registry's name of the agent to use instead (a spec such
            as ``"greedy_plus"``, built for the game searched); ``False``: none.
        seed: seed of the agent's generator (worlds and everything random in the search).
        name: the agent's name in reports.

    Attributes:
        last: :class:`SearchStats` of the last search.
        move_seconds: wall time of every searched decision (single legal actions are played
            without a search and not recorded).
    """

    def __init__(
        self,
        iterations: int | str | None = "auto",
        time_limit: float | None = None,
        batch_size: int = 64,
        exploration: float = 0.25,
        widening: float | None = 1.0,
        widening_exponent: float = 0.5,
        max_depth: int | None = None,
        rollout: str = "heuristic",
        rollout_eps: float = 0.0,
        objective: str = "points",
        win_weight: float = 0.5,
        belief: str = "evidence",
        root: str = "auto",
        knock: str = "always",
        anchor: bool | str = True,
        root_k: int | None = None,
        paired_z: float = 1.0,
        seed: int | None = None,
        name: str | None = None,
    ) -> None:
        if iterations is None and time_limit is None:
            raise ValueError("set iterations, time_limit or both")
        if iterations == "auto":
            pass
        elif isinstance(iterations, str) or (iterations is not None and iterations < 1):
            raise ValueError(f"iterations must be 'auto', None or at least 1, got {iterations!r}")
        if time_limit is not None and time_limit <= 0:
            raise ValueError(f"time_limit must be positive, got {time_limit}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {ROLLOUTS}, got {rollout!r}")
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
        if not 0.0 <= win_weight <= 1.0:
            raise ValueError(f"win_weight must be in [0, 1], got {win_weight}")
        if knock not in KNOCKS:
            raise ValueError(f"knock must be one of {KNOCKS}, got {knock!r}")
        if root not in ROOTS and root != "auto":
            raise ValueError(f"root must be 'auto' or one of {ROOTS}, got {root!r}")
        if belief not in BELIEFS:
            raise ValueError(f"belief must be one of {BELIEFS}, got {belief!r}")
        if not 0.0 <= rollout_eps <= 1.0:
            raise ValueError(f"rollout_eps must be in [0, 1], got {rollout_eps}")
        self._options = {"iterations": iterations, "root": root, "root_k": root_k}
        self.iterations: int | None = None  # the effective settings of the game searched
        self.root = "ucb"
        self.root_k = 4
        self.time_limit = time_limit
        self.batch_size = int(batch_size)
        self.exploration = float(exploration)
        self.widening = widening
        self.widening_exponent = float(widening_exponent)
        self.max_depth = max_depth
        self.rollout = rollout
        self.rollout_eps = float(rollout_eps)
        self.objective = objective
        self.win_weight = float(win_weight)
        self.belief = belief
        self.knock = knock
        if isinstance(anchor, str):
            from rummy_agents.arena.registry import check_spec

            check_spec(anchor)
        self.anchor: bool | str = anchor if isinstance(anchor, str) else bool(anchor)
        if root_k is not None and root_k < 1:
            raise ValueError(f"root_k must be at least 1, got {root_k}")
        self.paired_z = float(paired_z)
        self._anchors: dict[str, Any] = {}
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        budget = "auto" if iterations == "auto" else f"{iterations}it"
        budget = f"{time_limit}s" if iterations is None else budget
        self.name = name or f"ismcts-{budget}"
        self.last = SearchStats()
        self.move_seconds: list[float] = []
        self.max_rollout_steps = 1000

    # -- protocol ---------------------------------------------------------------------------
    def act(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """Choose a legal action by searching from the seat's information set.

        Args:
            observation: the PettingZoo observation dict (only ``"action_mask"`` is read).
            view: the seat's :class:`rummy_agents.base.SeatView` (``sample_worlds``, ``seat``,
                ``config``, ``game``).

        Returns:
            The id of a legal action.

        Raises:
            ValueError: if the mask has no legal action or no view is given for a search.
        """
        mask = np.asarray(observation["action_mask"])
        legal = legal_actions(mask)
        if legal.size == 1:
            return int(legal[0])
        if view is None:
            raise ValueError("ISMCTSAgent needs the seat's view (sample_worlds) to search")
        hooks = HOOKS.get(getattr(view, "game", ""), GENERIC_HOOKS)
        if self.knock == "always":
            a = hooks.knock_now(observation) if hooks.knock_now is not None else None
            if a is not None:
                return int(a)
        t0 = time.perf_counter()
        first = None
        if self.knock == "always" and hooks.forced is not None:
            world = view.sample_worlds(1, self.rng)
            if hooks.unsearched is not None:
                first = self._anchor_move(observation, view)
            if first is None:
                a = hooks.forced(world, 0)
                if a >= 0:
                    return int(a)
            elif hooks.unsearched(world, 0, first):
                return first  # the rule-based agent's own melds and lay-offs, not the policy's
        if first is None:
            first = self._anchor_move(observation, view)
        action = self.search(view, legal, first)
        self.move_seconds.append(time.perf_counter() - t0)
        return action

    def configure(self, hooks: GameHooks) -> None:
        """Set the effective ``iterations``, ``root`` and ``root_k``: the values given, or for
        ``"auto"``/``None`` the game's defaults (``hooks.defaults``).
        """
        for key, value in self._options.items():
            auto = value == "auto" or (key == "root_k" and value is None)
            setattr(self, key, hooks.defaults[key] if auto else value)

    def _anchor_move(self, observation: Mapping[str, Any], view: Any) -> int | None:
        """The move of the game's rule-based agent (``anchor=True`` and an ``anchor`` hook);
        ``None`` otherwise.
        """
        if not self.anchor:
            return None
        game = getattr(view, "game", "")
        hooks = HOOKS.get(game, GENERIC_HOOKS)
        if game not in self._anchors:
            seed = int(self.rng.integers(2**31))
            if isinstance(self.anchor, str):
                from rummy_agents.arena.registry import make_agent

                self._anchors[game] = make_agent(self.anchor, seed, game=game)
            elif hooks.anchor is not None:
                self._anchors[game] = hooks.anchor(seed)
            else:
                self._anchors[game] = None
        agent = self._anchors[game]
        return None if agent is None else int(agent.act(observation, view))

    # -- search -----------------------------------------------------------------------------
    def search(self, view: Any, legal: np.ndarray, first: int | None = None) -> int:
        """Run the search from the seat's current information set; returns the chosen action
        (``first``: a legal action to try first, ahead of the prior's order).
        """
        hooks = HOOKS.get(getattr(view, "game", ""), GENERIC_HOOKS)
        self.configure(hooks)
        seat = int(view.seat)
        scale = float(hooks.reward_scale(view.config))
        root = _Node(seat)
        if first is not None:
            world = self._worlds(view, 1, hooks)
            order = self._rank(hooks.prior(world, 0), legal) if hooks.prior is not None else legal
            if (
                self.knock == "always"
                and hooks.unsearched is not None
                and not hooks.unsearched(world, 0, first)
            ):
                # the anchor declined to meld or lay off now: the root weighs draws and
                # discards only, so the meld timing stays the anchor's
                order = order[[not hooks.unsearched(world, 0, int(a)) for a in order]]
            root.ranked[legal.tobytes()] = np.concatenate([[first], order[order != first]]).astype(
                legal.dtype
            )
        stats = SearchStats()
        t0 = time.perf_counter()
        if self.root == "paired":
            best = self._search_paired(view, legal, root, seat, hooks, scale, stats, t0)
        elif self.root == "halving":
            best = self._search_halving(view, legal, root, seat, hooks, scale, stats, t0)
        else:
            best = self._search_ucb(view, legal, root, seat, hooks, scale, stats, t0)
        stats.seconds = time.perf_counter() - t0
        stats.first = first
        for a, e in root.edges.items():
            stats.root_visits[a] = e.n
            stats.root_values[a] = e.w / e.n if e.n else -math.inf
        self.last = stats
        if best not in set(legal.tolist()):  # pragma: no cover - worlds share the seat's mask
            raise RuntimeError(f"search chose action {best}, not legal at the root")
        return best

    def _worlds(self, view: Any, n: int, hooks: GameHooks) -> Any:
        if self.belief == "evidence" and hooks.belief is not None:
            return hooks.belief(view, n, self.rng)
        return view.sample_worlds(n, self.rng)

    def _search_ucb(self, view: Any, legal: np.ndarray, root: _Node, seat: int,
                    hooks: GameHooks, scale: float, stats: SearchStats,
                    t0: float) -> int:  # fmt: skip
        """Plain SO-ISMCTS: UCB at the root too; the most visited root action wins."""
        done_it = 0
        while True:
            n = self.batch_size
            if self.iterations is not None:
                n = min(n, self.iterations - done_it)
            if n <= 0:
                break
            self._batch(self._worlds(view, n, hooks), root, seat, hooks, scale, stats)
            done_it += n
            if self.time_limit is not None and time.perf_counter() - t0 >= self.time_limit:
                break
        stats.iterations = done_it
        best, best_key = int(legal[0]), (-1, -math.inf)
        for a, e in root.edges.items():
            key = (e.n, e.w / e.n if e.n else -math.inf)
            if key > best_key:
                best, best_key = a, key
        return best

    def _search_paired(self, view: Any, legal: np.ndarray, root: _Node, seat: int,
                       hooks: GameHooks, scale: float, stats: SearchStats,
                       t0: float) -> int:  # fmt: skip
        """Paired comparison of the first ``root_k`` root actions against the first one.

        The first action (the anchor's move, else the prior's best) and the next ``root_k - 1``
        in prior order are each played in the same sampled worlds (copies, random streams
        included; the rollouts below are then paired samples). The move played is the action
        whose mean value over the worlds beats the first action's by the most, if that gain is
        more than ``paired_z`` standard errors of the paired differences; otherwise the first.
        """
        if legal.tobytes() in root.ranked:
            order = root.ranked[legal.tobytes()]
        elif hooks.prior is not None:
            order = self._rank(hooks.prior(self._worlds(view, 1, hooks), 0), legal)
        else:
            order = legal
        cands = [int(a) for a in order[: self.root_k]]
        k = len(cands)
        rows: list[np.ndarray] = []
        done_it = 0
        while True:
            m = max(1, self.batch_size // k)
            if self.iterations is not None:
                m = min(m, (self.iterations - done_it) // k)
            if m <= 0 or (rows and self.iterations is None
                          and time.perf_counter() - t0 >= self.time_limit):  # fmt: skip
                break
            worlds = self._worlds(view, m, hooks)
            rep = type(worlds)(worlds.config, m * k)
            rep.states[:] = np.repeat(worlds.states, k)
            rep.masks[:] = np.repeat(worlds.masks, k, axis=0)
            forced = np.tile(np.array(cands, dtype=np.int64), m)
            v = self._batch(rep, root, seat, hooks, scale, stats, forced)
            rows.append(v.reshape(m, k))
            done_it += m * k
            if self.time_limit is not None and time.perf_counter() - t0 >= self.time_limit:
                break
        stats.iterations = done_it
        if not rows:
            return cands[0]
        vals = np.concatenate(rows)
        diff = vals[:, 1:] - vals[:, :1]
        n = diff.shape[0]
        if n < 2 or k < 2:
            return cands[0]
        gain = diff.mean(0)
        se = diff.std(0, ddof=1) / math.sqrt(n)
        j = int(np.argmax(gain - self.paired_z * se))
        if gain[j] - self.paired_z * se[j] > 0.0:
            return cands[j + 1]
        return cands[0]

    def _search_halving(self, view: Any, legal: np.ndarray, root: _Node, seat: int,
                        hooks: GameHooks, scale: float, stats: SearchStats,
                        t0: float) -> int:  # fmt: skip
        """Sequential halving over the root actions on common determinizations.

        Every root action still in the race is played in the same sampled worlds (each world
        is copied once per action, random streams included), so the actions are compared on
        the same hidden cards and stock order - paired samples, far less noisy than independent
        ones. Each round gets an equal share of the budget; after it the worse half (by mean
        value over all the worlds so far, which all survivors share) is dropped. Below the
        root the search is the usual ISMCTS over a tree shared by all worlds.
        """
        alive = [int(a) for a in legal]
        if legal.tobytes() in root.ranked:
            alive = [int(a) for a in root.ranked[legal.tobytes()]]
        elif hooks.prior is not None:
            probe = self._worlds(view, 1, hooks)
            scores = hooks.prior(probe, 0)
            alive = [int(a) for a in self._rank(scores, legal)]
        rounds = max(1, math.ceil(math.log2(len(alive))))
        done_it = 0
        for r in range(rounds):
            k = len(alive)
            if self.iterations is not None:
                share = (self.iterations - done_it) // (rounds - r)
                per_action = max(1, share // k)
            else:
                per_action = None
            round_end = None if self.time_limit is None else t0 + self.time_limit * (r + 1) / rounds
            given = 0
            while True:
                m = max(1, self.batch_size // k)
                if per_action is not None:
                    m = min(m, per_action - given)
                if m <= 0:
                    break
                worlds = self._worlds(view, m, hooks)
                rep = type(worlds)(worlds.config, m * k)
                rep.states[:] = np.repeat(worlds.states, k)
                rep.masks[:] = np.repeat(worlds.masks, k, axis=0)
                forced = np.tile(np.array(alive, dtype=np.int64), m)
                self._batch(rep, root, seat, hooks, scale, stats, forced)
                given += m
                done_it += m * k
                if round_end is not None and time.perf_counter() >= round_end:
                    break
            if r < rounds - 1:
                means = {a: root.edges[a].w / max(root.edges[a].n, 1) for a in alive}
                order = sorted(alive, key=lambda a: -means[a])  # stable: prior order on ties
                alive = order[: math.ceil(k / 2)]
        stats.iterations = done_it
        return max(alive, key=lambda a: root.edges[a].w / max(root.edges[a].n, 1))

    def _candidates(self, node: _Node, game: Any, i: int, legal: np.ndarray, hooks: GameHooks,
                    seat: int) -> np.ndarray:  # fmt: skip
        """Legal actions of world ``i`` in prior order, cut by progressive widening."""
        if hooks.prior is None or legal.size == 1:
            ranked = legal
        elif node.player == seat:
            # the searching seat's own decisions: the same information in every world
            key = legal.tobytes()
            ranked = node.ranked.get(key)
            if ranked is None:
                ranked = self._rank(hooks.prior(game, i), legal)
                node.ranked[key] = ranked
        else:
            ranked = self._rank(hooks.prior(game, i), legal)
        if self.widening is None:
            return ranked
        k = max(1, int(self.widening * (node.n + 1) ** self.widening_exponent))
        return ranked[:k]

    @staticmethod
    def _rank(scores: np.ndarray, legal: np.ndarray) -> np.ndarray:
        s = scores[legal]
        return legal[np.argsort(-s, kind="stable")]

    def _batch(self, worlds: Any, root: _Node, seat: int, hooks: GameHooks, scale: float,
               stats: SearchStats, forced: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """Descend once in every world of the batch, roll the leaves out together, back up;
        returns each world's value for the searching seat.
        """
        n = worlds.num_games
        na = worlds.num_actions
        acc = np.zeros((n, worlds.num_players), dtype=np.float64)
        ended = np.zeros(n, dtype=bool)
        hands0 = worlds.states["hands_played"].copy()
        paths: list[list[tuple[_Node, _Edge]]] = []
        c = self.exploration
        auto = hooks.forced if self.knock == "always" else None
        for i in range(n):
            node = root
            path: list[tuple[_Node, _Edge]] = []
            depth = 0
            while True:
                legal = np.flatnonzero(worlds.masks[i, :na])
                if legal.size == 0:
                    ended[i] = True
                    break
                if auto is not None and (forced is None or depth > 0):
                    fa = auto(worlds, i)
                    if fa >= 0:
                        done, _cur, hands = _step_one(worlds, i, fa, acc[i])
                        if done or hands != hands0[i]:
                            ended[i] = True
                            break
                        continue
                node.n += 1
                fresh = False
                a = -1
                if forced is not None and depth == 0:
                    a = int(forced[i])
                    edge = node.edges.get(a)
                    if edge is None:
                        edge = node.edges[a] = _Edge()
                    cands = legal[:1]  # never stop below a forced root action
                else:
                    cands = self._candidates(node, worlds, i, legal, hooks, seat)
                    for b in cands:
                        if int(b) not in node.edges:
                            a = int(b)
                            break
                if forced is not None and depth == 0:
                    pass
                elif a >= 0:
                    edge = _Edge()
                    node.edges[a] = edge
                    fresh = True
                    for b in cands:
                        e = node.edges.get(int(b))
                        if e is not None:
                            e.avail += 1
                else:
                    best_u = -math.inf
                    edge = None
                    for b in cands:
                        e = node.edges[int(b)]
                        e.avail += 1
                        if e.n == 0:
                            u = math.inf
                        else:
                            u = e.w / e.n + c * math.sqrt(math.log(e.avail) / e.n)
                        if u > best_u:
                            best_u, a, edge = u, int(b), e
                edge.n += 1
                path.append((node, edge))
                mover = node.player
                done, cur, hands = _step_one(worlds, i, a, acc[i])
                depth += 1
                if done or hands != hands0[i]:
                    ended[i] = True
                    break
                if fresh and cands.size > 1:
                    break
                if self.max_depth is not None and depth >= self.max_depth:
                    break
                key = None
                if mover == seat and hooks.observed_outcome is not None:
                    key = hooks.observed_outcome(worlds, i, a)
                child = edge.children.get(key)
                if child is None:
                    child = _Node(int(cur))
                    edge.children[key] = child
                    if key is not None:  # a new observed outcome: evaluate it first
                        break
                node = child
            stats.max_depth = max(stats.max_depth, depth)
            paths.append(path)
        if not ended.all():
            acc += self._rollout(worlds, ~ended, hands0, hooks)
        if hooks.zero_sum:
            acc = zero_sum(acc)
        values = objective_values(acc, self.objective, scale, self.win_weight)
        for i, path in enumerate(paths):
            v = values[i]
            for node, edge in path:
                edge.w += float(v[node.player])
        return values[:, seat]

    def _rollout(self, worlds: Any, active: np.ndarray, hands0: np.ndarray,
                 hooks: GameHooks) -> np.ndarray:  # fmt: skip
        """Play the active worlds to the end of the hand together; returns (N, players)
        rewards.
        """
        acc = np.zeros((worlds.num_games, worlds.num_players), dtype=np.float64)
        alive = active.copy()
        for _ in range(self.max_rollout_steps):
            if not alive.any():
                break
            actions = hooks.rollout_actions(worlds, self.rollout, self.rollout_eps)
            _, rewards, term, trunc, _ = worlds.step(
                actions, autoreset=False, write_obs=False, check=False
            )
            acc[alive] += rewards[alive]
            over = term | trunc | (worlds.states["hands_played"] != hands0)
            alive &= ~over
        return acc


__all__ = [
    "GENERIC_HOOKS",
    "HOOKS",
    "GameHooks",
    "ISMCTSAgent",
    "SearchStats",
    "gin_prior_at",
    "gin_rollout_actions",
    "objective_values",
    "random_rollout_actions",
]
