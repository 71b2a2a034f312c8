"""A greedy rule-based 500 Rum agent that acts only from its seat's observation and mask.

:class:`FiveHundredRumGreedyAgent` reads the flat observation through
:meth:`rummy_env.encodings.five_hundred_rum.Layout.split` (own hand, the discard pile in order,
the cards each opponent is known to hold, the table melds, the phase, the obligation) and the
action mask; from the :class:`~rummy_agents.base.SeatView` it reads only the rule options
(``view.config``). It never looks at hidden state, and it only ever returns an action whose
mask entry is 1, so it plays every rule option with 2 to 8 players.

Its rules, by phase (``P(hand)`` is the points the meld planner below can meld this turn from
``hand``, with new melds and lay-offs onto the table melds):

**Draw.** For every legal ``TAKE_DISCARD[d]`` the taken cards are the pile's top ``d + 1``
cards. The agent plans the turn with them (the deepest card must be melded when the rules say
so - a deep take, or any take under ``must_meld_discard``; in a new meld under
``deepest_card_new_meld``) and scores the take
``net(d) = P(hand + taken) - P(hand) - (points of the taken cards the plan leaves in hand)``:
the points the take adds to this turn's melds against the points of taken cards it is left
holding. It takes the depth with the largest ``net(d) > 0`` (shallowest on ties); otherwise it
draws from the stock, or passes when the stock is empty.

**"Rummy!" offers.** It always calls when the mask allows a call, at the depth with the largest
``net(d)`` (shallowest on ties), even a negative one: a call is a free extra turn that also
skips the players between the discarder and the caller.

**Play** (after the draw, or after a call). It plans the hand and plays the plan's steps: new
melds first (in the plan's order), then lay-offs of naturals, then lay-offs of jokers. It
plays the first step of the plan the mask allows; when the mask allows none of them but does
allow some meld or lay-off (the planner considers fewer templates than the rules allow), it
plays the legal meld or lay-off worth the most points. So it melds and lays off whenever the
rules let it. Only then does it discard.

**Holding melds** (option ``hold_melds=k``; off by default). While every other player holds
more than ``k`` cards, the plan's new melds stay in hand: the agent lays off naturals onto the
table's melds and discards a card the plan leaves in hand, so the opponents have no new melds
to lay off onto and no "Rummy!" calls from them. It lays the whole plan in the turn it can go
out (the plan leaves at most one card), once an opponent holds ``k`` cards or fewer, and when a
taken discard is owed to a meld (its strength: ``docs/agents.md``).

**Discard.** Among the legal discards it throws the card with the highest score
(:func:`rummy_agents.joker_rollouts.greedy_discard_score`, which the ``joker_cards_discards``
features of learned agents read too)::

    score(c) = value(c)                          # shed points: they count against us
               - 100 if c is a joker
               - 50  if c lays off on a table meld (an easy lay-off or "Rummy!" call)
               - 30  if c melds with cards in the discard pile (a "Rummy!" call)
               - 12 / 6 per card the next player is known to hold (taken from the pile) of
                 the same rank, or same suit one / two ranks away (caps at 36)
               - 8 / 6 / 3 per other card in our own hand of the same rank, or same suit one /
                 two ranks away (keeps our own near-melds; caps at 16)

(the next player is the seat to the left, who sees the discard first). Ties are broken by the
agent's random generator, so the agent is deterministic for a given seed.

**Meld planner.** An exhaustive search over disjoint new melds, branching on the lowest
natural card left (either it goes into one of the meld templates containing it, or it stays
in hand), followed by a greedy pass that lays off every leftover natural and then a leftover
joker (at a spot after which a leftover natural fits, if there is one) on a table meld or a new
meld, repeated while anything fits. Templates
searched: groups of 3 or 4 naturals and groups of 3 cards with 1 or 2 jokers; runs whose end
cards are natural (jokers fill inner gaps) and 3-card runs with jokers anywhere. Longer runs
or fourth cards made of jokers come from the lay-off pass. A run takes every natural it covers
that the hand holds (as the engine does), and the search stops after ``node_limit`` nodes
(keeping the best plan found). Card values follow the rules (``values_5_10_15``, a low ace in
A-2-3 worth 1 or 5, jokers 15). The agent (and the learned agents' ``plan`` features) run this
search compiled (:class:`rummy_agents.planner_kernels.CompiledMeldPlanner`: the same plans,
about 100 times faster); :class:`MeldPlanner` is the reference it is tested against.

**Compiled decisions.** ``act`` runs these rules compiled, reading the observation and
deciding in one numba call (:func:`rummy_agents.joker_greedy_kernels.greedy500_rows`), and
``act_batch(observations, masks)`` decides many rows in one call once the agent is bound to
its rule options (:meth:`FiveHundredRumGreedyAgent.bind`). Both choose exactly the actions of
``act_reference`` (the Python rules, kept as the readable reference) and draw the same
tie-breaks from the agent's generator (``tests/test_joker_greedy_compiled.py``).

Example:
    >>> from rummy_env import five_hundred_rum_v1
    >>> from rummy_agents.base import SeatView
    >>> env = five_hundred_rum_v1.raw_env()
    >>> env.reset(seed=0)
    >>> agent = FiveHundredRumGreedyAgent(seed=0)
    >>> name = env.agent_selection
    >>> a = agent.act(env.observe(name), SeatView(env, name))
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from rummy_agents.base import legal_actions
from rummy_agents.joker_rollouts import greedy_discard_score
from rummy_agents.pcg64 import SeededGenerator
from rummy_env.core.jmelds import TPL_A, TPL_B, TPL_C, TPL_KIND
from rummy_env.encodings import five_hundred_rum as E

if TYPE_CHECKING:
    from rummy_agents.planner_kernels import CompiledMeldPlanner

JOKER = 52
NUM_TYPES = 53

# template ids by (rank, suit mask, jokers) and (suit, low, high)
_GROUP_ID = {
    (int(a), int(b), int(c)): t
    for t, (k, a, b, c) in enumerate(zip(TPL_KIND, TPL_A, TPL_B, TPL_C, strict=True))
    if k == 1
}
_RUN_ID = {
    (int(a), int(b), int(c)): t
    for t, (k, a, b, c) in enumerate(zip(TPL_KIND, TPL_A, TPL_B, TPL_C, strict=True))
    if k == 2
}

# A table meld as the engine keeps it: [kind (1 group, 2 run), key (rank / suit), lo, hi,
# naturals (group: suit mask; run: position mask), jokers (group: count; run: position mask)]
Meld = list[int]

# Plan steps: ("meld", template), ("layoff", card, slot), ("joker", slot, end)
Step = tuple[str, int, int]


def _pos_card(suit: int, pos: int) -> int:
    return suit * 13 + (0 if pos == 13 else pos)


def _popcount(x: int) -> int:
    return bin(x).count("1")


def card_value(c: int, v51015: bool) -> int:
    """Points of a card type in hand (jokers and aces 15)."""
    if c == JOKER:
        return 15
    r = c % 13
    if r == 0:
        return 15
    if v51015:
        return 5 if r <= 8 else 10
    return r + 1 if r <= 8 else 10


def placed_value(c: int, pos: int, v51015: bool) -> int:
    """Points of a card placed at run position ``pos`` (0: the low ace) or in a group (-1)."""
    if c != JOKER and pos == 0:
        return 5 if v51015 else 1
    return card_value(c, v51015)


def fit_natural(m: Meld, c: int) -> int:
    """Where natural ``c`` lays off on meld ``m`` (-1: nowhere; 14: a group), as the engine
    decides (``rummy_env.core.table.fit_natural``).
    """
    kind, key, lo, hi, nat, jok = m
    s, r = divmod(c, 13)
    if kind == 1:
        if key != r or nat >> s & 1 or _popcount(nat) + jok >= 4:
            return -1
        return 14
    if key != s:
        return -1
    if r == 0:
        if hi == 12 and lo > 0:
            return 13
        if lo == 1 and hi < 13:
            return 0
        return -1
    if r == lo - 1 or (r == hi + 1 and hi + 1 <= 12):
        return r
    return -1


def fit_joker(m: Meld, e: int) -> int:
    """Where a joker lays off on meld ``m`` at end ``e`` (0 group / low, 1 high); -1 nowhere."""
    kind, _, lo, hi, nat, jok = m
    if kind == 1:
        return 14 if e == 0 and _popcount(nat) + jok < 4 else -1
    if e == 0:
        return -1 if lo == 0 or (lo == 1 and hi == 13) else lo - 1
    return -1 if hi == 13 or (hi == 12 and lo == 0) else hi + 1


def _place(m: Meld, c: int, pos: int) -> None:
    if m[0] == 1:
        if c == JOKER:
            m[5] += 1
        else:
            m[4] |= 1 << (c // 13)
        return
    if c == JOKER:
        m[5] |= 1 << pos
    else:
        m[4] |= 1 << pos
    m[2] = min(m[2], pos)
    m[3] = max(m[3], pos)


@dataclass
class Plan:
    """A turn's melds and lay-offs: ``points`` melded, ``steps`` in play order, ``left`` the
    hand afterwards (53 counts).
    """

    points: int
    steps: list[Step]
    left: list[int]


class MeldPlanner:
    """Most points meldable this turn from a hand (see the module docstring).

    Args:
        v51015: the ``values_5_10_15`` card values.
        node_limit: search nodes per plan before the best plan so far is returned.
    """

    def __init__(self, v51015: bool = False, node_limit: int = 3000) -> None:
        self.v51015 = v51015
        self.node_limit = node_limit
        self._val = [card_value(c, v51015) for c in range(NUM_TYPES)]
        self.values = np.array(self._val, np.int64)  # the same, for the compiled discard score

    def best(
        self,
        hand: list[int],
        table: list[Meld],
        oblig: int = -1,
        oblig_new: bool = False,
    ) -> Plan | None:
        """The best plan, or ``None`` when no plan found melds the obligation.

        Args:
            hand: 53 card counts (type 52 = joker).
            table: the table melds, slot order.
            oblig: card type that must be melded this turn (-1: none).
            oblig_new: the obligation needs a new meld (a lay-off does not do).
        """
        self._table = table
        self._oblig = oblig
        self._oblig_new = oblig_new
        self._best: Plan | None = None
        self._nodes = 0
        avail = list(hand)
        skipped = [0] * NUM_TYPES
        self._search(avail, skipped, [], [], 0, oblig < 0)
        return self._best

    # -- search ------------------------------------------------------------------------------

    def _search(
        self,
        avail: list[int],
        skipped: list[int],
        new: list[Meld],
        steps: list[Step],
        pts: int,
        sat: bool,
    ) -> None:
        self._nodes += 1
        c = next((x for x in range(52) if avail[x] > 0), -1)
        if c < 0 or self._nodes > self.node_limit:
            self._leaf(avail, skipped, new, steps, pts, sat)
            return
        # bound: even melding every card left cannot beat the best plan
        if self._best is not None:
            rest = sum(self._val[x] * (avail[x] + skipped[x]) for x in range(NUM_TYPES))
            if pts + rest <= self._best.points:
                return
        for t, meld, taken, j, tp in self._templates_with(c, avail, skipped):
            for x in taken:
                avail[x] -= 1
            avail[JOKER] -= j
            hit = (self._oblig in taken) or (self._oblig == JOKER and j > 0)
            new.append(meld)
            steps.append(("meld", t, 0))
            self._search(avail, skipped, new, steps, pts + tp, sat or hit)
            steps.pop()
            new.pop()
            avail[JOKER] += j
            for x in taken:
                avail[x] += 1
        avail[c] -= 1  # c stays in hand (it may still be laid off)
        skipped[c] += 1
        self._search(avail, skipped, new, steps, pts, sat)
        skipped[c] -= 1
        avail[c] += 1

    def _templates_with(
        self, c: int, avail: list[int], skipped: list[int]
    ) -> list[tuple[int, Meld, list[int], int, int]]:
        """(template, meld, naturals taken, jokers, points) of the templates containing the
        lowest card ``c``.
        """
        out = []
        s, r = divmod(c, 13)
        jk = avail[JOKER]
        val = self._val
        held = [q for q in range(4) if avail[q * 13 + r] > 0]
        others = [q for q in held if q != s]
        n_o = len(others)
        for sub in range(1 << n_o):
            suits = [s] + [others[i] for i in range(n_o) if sub >> i & 1]
            k = len(suits)
            for j in range(0, 3):
                if j > jk or not (3 <= k + j <= 4) or (j > 0 and k + j != 3):
                    continue
                mask = sum(1 << q for q in suits)
                cards = [q * 13 + r for q in suits]
                tp = sum(val[x] for x in cards) + 15 * j
                out.append((_GROUP_ID[(r, mask, j)], [1, r, 0, 0, mask, j], cards, j, tp))
        for p in (0, 13) if r == 0 else (r,):
            for lo in range(p, -1, -1):
                if self._window_jokers(s, lo, p, avail, skipped) > jk:
                    break
                for hi in range(max(p, lo + 2), 14):
                    if lo == 0 and hi == 13:
                        break
                    jn = self._window_jokers(s, lo, hi, avail, skipped)
                    if jn > jk:
                        break
                    if hi - lo + 1 > 3 and (
                        avail[_pos_card(s, lo)] == 0 or avail[_pos_card(s, hi)] == 0
                    ):
                        continue  # longer runs end in naturals; the lay-off pass adds jokers
                    taken, jmask, tp = [], 0, 0
                    for pos in range(lo, hi + 1):
                        x = _pos_card(s, pos)
                        if avail[x] > 0:
                            taken.append(x)
                            tp += placed_value(x, pos, self.v51015)
                        else:
                            jmask |= 1 << pos
                            tp += 15
                    nat = ((1 << (hi + 1)) - (1 << lo)) & ~jmask
                    meld = [2, s, lo, hi, nat, jmask]
                    out.append((_RUN_ID[(s, lo, hi)], meld, taken, jn, tp))
        return out

    @staticmethod
    def _window_jokers(s: int, lo: int, hi: int, avail: list[int], skipped: list[int]) -> int:
        """Jokers a run of suit ``s`` on ``lo..hi`` needs; a large number when it would take a
        card the search left in hand (the engine takes every natural the hand holds).
        """
        j = 0
        for pos in range(lo, hi + 1):
            x = _pos_card(s, pos)
            if avail[x] == 0:
                if skipped[x] > 0:
                    return 99
                j += 1
        return j

    def _leaf(
        self,
        avail: list[int],
        skipped: list[int],
        new: list[Meld],
        steps: list[Step],
        pts: int,
        sat: bool,
    ) -> None:
        left = [a + b for a, b in zip(avail, skipped, strict=True)]
        melds = [list(m) for m in self._table] + [list(m) for m in new]
        plan_steps = list(steps)
        ob = self._oblig
        changed = True
        while changed:
            changed = False
            for c in range(52):
                while left[c] > 0:
                    for k, m in enumerate(melds):
                        pos = fit_natural(m, c)
                        if pos >= 0:
                            _place(m, c, pos)
                            left[c] -= 1
                            pts += placed_value(c, -1 if pos == 14 else pos, self.v51015)
                            plan_steps.append(("layoff", c, k))
                            if c == ob and not self._oblig_new:
                                sat = True
                            changed = True
                            break
                    else:
                        break
            if left[JOKER] > 0:
                spot = self._joker_spot(melds, left)
                if spot is not None:
                    k, e, pos = spot
                    _place(melds[k], JOKER, pos)
                    left[JOKER] -= 1
                    pts += 15
                    plan_steps.append(("joker", k, e))
                    if ob == JOKER and not self._oblig_new:
                        sat = True
                    changed = True
        if sat and (self._best is None or pts > self._best.points):
            self._best = Plan(pts, plan_steps, left)

    @staticmethod
    def _joker_spot(melds: list[Meld], left: list[int]) -> tuple[int, int, int] | None:
        """(meld, end, position) for the next joker lay-off: the first spot after which a
        leftover natural fits (a joker bridging a gap), else the first spot; None if none.
        """
        first = None
        for k, m in enumerate(melds):
            for e in (0, 1):
                pos = fit_joker(m, e)
                if pos < 0:
                    continue
                if first is None:
                    first = (k, e, pos)
                if m[0] == 2:
                    nxt = pos - 1 if e == 0 else pos + 1
                    if 0 <= nxt <= 13 and left[_pos_card(m[1], nxt)] > 0:
                        return k, e, pos
        return first


def turn_plan(
    planner: MeldPlanner | CompiledMeldPlanner,
    hand: list[int],
    table: list[Meld],
    oblig: int = -1,
    oblig_new: bool = False,
) -> Plan | None:
    """The plan ``greedy`` plays (:meth:`MeldPlanner.best`): when the owed card must go into a
    new meld and no plan does that, a plan that lays it off instead (``None`` if none melds it).
    """
    plan = planner.best(hand, table, oblig, oblig_new)
    if plan is None and oblig_new:
        plan = planner.best(hand, table, oblig, False)
    return plan


# ---------------------------------------------------------------------------------------------
# Reading the observation


@lru_cache(maxsize=32)
def _layout(num_players: int, deck_size: int) -> E.Layout:
    return E.Layout(num_players, deck_size)


def infer_layout(obs_size: int, num_actions: int) -> E.Layout:
    """The layout whose observation and action sizes match (for use without a view).

    Raises:
        ValueError: if no 2-8 player layout of any deck size matches.
    """
    for d in (54, 52, 108, 104):
        for p in range(2, 9):
            lay = _layout(p, d)
            if lay.num_actions == num_actions and lay.obs_size == obs_size:
                return lay
    raise ValueError(f"no 500 Rum layout has {obs_size} observations and {num_actions} actions")


def table_melds(parts: Mapping[str, np.ndarray]) -> list[Meld]:
    """The table melds of a split observation, in slot order."""
    kinds = parts["meld_kind"]
    n = int(np.count_nonzero(kinds.sum(axis=1) > 0.5))
    if n == 0:
        return []
    # one numpy call per piece, then plain Python: this runs for every rule-agent decision
    is_group = (kinds[:n, 0] > 0.5).tolist()
    rows, cols = np.nonzero(parts["meld_cards"][:n] > 0.5)
    cards: list[list[int]] = [[] for _ in range(n)]
    for m, c in zip(rows.tolist(), cols.tolist(), strict=True):
        cards[m].append(c)
    jokers = parts["meld_jokers"][:n].tolist()
    ends = parts["meld_ends"][:n].tolist()
    out = []
    for m in range(n):
        held = cards[m]
        if is_group[m]:
            nat = sum(1 << (c // 13) for c in held)
            out.append([1, held[0] % 13, 0, 0, nat, int(round(jokers[m][0] * 4))])
        else:
            lo = int(round(ends[m][0] * 13))
            hi = int(round(ends[m][1] * 13))
            jok = sum(1 << p for p in range(14) if jokers[m][p] > 0.5)
            nat = ((1 << (hi + 1)) - (1 << lo)) & ~jok
            out.append([2, held[0] // 13, lo, hi, nat, jok])
    return out


def obligation(parts: Mapping[str, np.ndarray]) -> int:
    """The card type a split observation's player owes to a meld this turn (-1: none)."""
    ob = parts["obligation"]
    return int(np.argmax(ob)) if ob.max() > 0.5 else -1


def _counts(x: np.ndarray) -> list[int]:
    return np.rint(np.asarray(x) * 2).astype(np.int64).tolist()


# ---------------------------------------------------------------------------------------------
# The agent


_LAZY: dict[str, Any] = {}


def lazy_module(name: str) -> Any:
    """Module ``name``, imported at its first use: the kernel and planner modules import this
    one, and an ``import`` statement per decision costs about a microsecond.
    """
    mod = _LAZY.get(name)
    if mod is None:
        mod = _LAZY[name] = importlib.import_module(name)
    return mod


KERNELS = "rummy_agents.joker_greedy_kernels"
PLANNERS = "rummy_agents.planner_kernels"


class CompiledDecisions(SeededGenerator):
    """``act``, ``act_batch`` and ``bind`` of a rule agent whose rules run compiled: a kernel
    of :mod:`rummy_agents.joker_greedy_kernels` decides rows of observations in order (the
    same actions as the agent's ``act_reference``, the Python rules, with the same draws from
    its generator ``rng``) and leaves the rows it does not decide (malformed observations) to
    ``act_reference``. Subclasses give the kernel, its parameters and the options check.
    """

    rng: np.random.Generator
    config: Any = None
    _out1: np.ndarray  # act()'s output row

    def act_reference(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """The Python rules (subclasses)."""
        raise NotImplementedError

    def _rows_kernel(self) -> Any:
        """The compiled ``rows(obs, masks, *params, rng, out, start)`` (subclasses)."""
        raise NotImplementedError

    def _kernel_params(self, cfg: Any, obs: np.ndarray, mask: np.ndarray) -> tuple[Any, ...] | None:
        """The kernel's parameters for these rule options (``None``: a view-less call) and a
        row's 1-D arrays, or ``None`` where they do not fit the layout (subclasses).
        """
        raise NotImplementedError

    def _check_options(self, config: Any) -> None:
        """Raise for rule options the agent cannot play (subclasses)."""
        raise NotImplementedError

    def _compiled_ok(self) -> bool:
        """Do the kernels play as this agent does: its generator a ``numpy.random.Generator``
        (what they draw from) and its planners the compiled ones (which they run)? Else the
        reference decides (the agent's planner may be swapped for the Python one to compare).
        """
        raise NotImplementedError

    def bind(self, config: Any) -> Any:
        """Fix the rule options this agent plays under (for :meth:`act_batch`, which has no
        view to read them from); returns the agent.

        Args:
            config: the game's rule options (its config class, or anything with the attributes
                the agent reads from ``view.config``), or ``None`` to unbind.

        Raises:
            AttributeError: for options without the player count (or deck size).
            ValueError: for a player count or deck size that has no layout.
        """
        if config is not None:
            self._check_options(config)
        self.config = config
        return self

    @property
    def act_batch(self) -> Any:
        """``act_batch(observations, masks, config=None) -> actions``: one action per row,
        compiled (:meth:`_act_batch`). It exists once the agent knows the rule options
        (:meth:`bind`): the vector envs call ``act_batch(observations, masks)`` on any agent
        that has it, without the options, and play agents without it one game at a time
        through :meth:`act`, with each game's view.

        Raises:
            AttributeError: while no options are bound.
        """
        if self.config is None:
            raise AttributeError(
                "act_batch needs the rule options: bind(config) first (act() reads them from "
                "the view)"
            )
        return self._act_batch

    def compiled_policy(self, game: Any) -> Any:
        """This agent as a compiled opponent of the Gymnasium vector env: a
        :class:`rummy_agents.opponent_loop.CompiledPolicy` (the kernel's parameters for the
        env's rule options and ``self.rng``), or ``None`` where :meth:`act` would not run the
        compiled kernel.

        Args:
            game: the env's batched game (``config``, ``obs_size``, ``num_actions`` are read).
        """
        obs = np.zeros(int(game.obs_size), np.float32)
        mask = np.zeros(int(game.num_actions), np.int8)
        try:
            kp = self._kernel_params(game.config, obs, mask)
        except (AttributeError, TypeError, ValueError):
            return None
        if kp is None or not self._compiled_ok():
            return None
        from rummy_agents.opponent_loop import CompiledPolicy  # noqa: PLC0415 - numba on use

        return CompiledPolicy(tuple(kp), self)

    def act(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """Choose a legal action: :meth:`act_reference`'s, decided by the compiled kernel (the
        reference decides the malformed observations the kernel leaves to it, and decides
        everything when the agent's planner or generator was replaced by another kind).

        Args:
            observation: the seat's observation dict (``"observation"``, ``"action_mask"``).
            view: the seat's :class:`~rummy_agents.base.SeatView`; only ``view.config`` (the rule
                options) is read. Without a view the layout is inferred from the array sizes
                and the default options are assumed.

        Returns:
            An action id whose mask entry is 1.

        Raises:
            ValueError: if the mask allows no action.
        """
        k = lazy_module(KERNELS)
        obs = np.asarray(observation["observation"], dtype=np.float32)
        mask = np.asarray(observation["action_mask"])
        kp = self._kernel_params(getattr(view, "config", None), obs, mask)
        if kp is None or obs.ndim != 1 or mask.ndim != 1 or not self._compiled_ok():
            return self.act_reference(observation, view)
        out = self._out1
        o = (obs if obs.flags.c_contiguous else np.ascontiguousarray(obs)).reshape(1, -1)
        m = k.as_mask8(mask)
        m = (m if m.flags.c_contiguous else np.ascontiguousarray(m)).reshape(1, -1)
        if k.decide_one(self._rows_kernel(), o, m, *kp, self.rng, out) == 1:
            return int(out[0])
        if out[0] == k.NO_LEGAL:
            legal_actions(mask)  # raises its ValueError
        return self.act_reference(observation, view)

    def _act_batch(
        self, observations: np.ndarray, masks: np.ndarray, config: Any = None
    ) -> np.ndarray:
        """One action per row, compiled: row ``i`` is what :meth:`act` chooses for
        ``observations[i]`` and ``masks[i]`` with these options, the rows decided in order
        (so the tie-breaks are drawn from the agent's generator as one :meth:`act` at a time
        draws them).

        Args:
            observations: (N, obs_size) observations of the players to act.
            masks: (N, A) action masks.
            config: the rule options (default: the ones bound by :meth:`bind`).

        Returns:
            (N,) int64 legal action ids.

        Raises:
            ValueError: for arrays of other shapes than the options' layout, or a row whose
                mask allows no action (before any row is decided).
        """
        k = lazy_module(KERNELS)
        cfg = self.config if config is None else config
        obs = np.ascontiguousarray(observations, dtype=np.float32)
        m = np.asarray(masks)
        k.check_batch(obs, m)
        out = np.empty(obs.shape[0], np.int64)
        if obs.shape[0] == 0:
            return out
        view = k.ConfigView(cfg)
        kp = self._kernel_params(cfg, obs[0], m[0])
        if kp is None:
            raise ValueError(
                f"observations and masks of {obs.shape[1]} and {m.shape[1]} columns are not "
                f"those of the rule options {cfg!r}"
            )
        if not self._compiled_ok():
            for i in range(obs.shape[0]):
                out[i] = self.act_reference({"observation": obs[i], "action_mask": m[i]}, view)
            return out
        m8 = np.ascontiguousarray(k.as_mask8(m))
        rows = self._rows_kernel()
        start = 0
        while start < obs.shape[0]:
            start = rows(obs, m8, *kp, self.rng, out, start)
            if start < obs.shape[0]:  # a row the kernel leaves to the reference
                row = {"observation": obs[start], "action_mask": m[start]}
                out[start] = self.act_reference(row, view)
                start += 1
        return out


class FiveHundredRumGreedyAgent(CompiledDecisions):
    """Greedy 500 Rum player (rules in the module docstring).

    Args:
        seed: seed of the generator that breaks ties between equally scored discards.
        node_limit: meld planner search nodes per plan.
        hold_melds: keep the plan's new melds (and what it lays off onto them) in hand while
            every other player holds more than this many cards, laying them only in the turn
            the hand can go out, or once an opponent is that short; lay-offs of naturals onto
            the table are still played, and a taken discard owed to a meld is always melded.
            ``None``: never hold (lay the whole plan at once).
        hold_jokers: with ``hold_melds``, also keep jokers that the plan lays off onto the
            table.

    Raises:
        ValueError: for a negative ``hold_melds``.
    """

    name = "greedy"

    def __init__(
        self,
        seed: int | None = None,
        node_limit: int = 3000,
        hold_melds: int | None = None,
        hold_jokers: bool = True,
    ) -> None:
        if hold_melds is not None and (isinstance(hold_melds, bool) or int(hold_melds) < 0):
            raise ValueError(f"hold_melds must be None or a count >= 0, got {hold_melds!r}")
        self._init_rng(seed)  # self.rng: default_rng(seed), built on first use
        self.node_limit = node_limit
        self.hold_melds = None if hold_melds is None else int(hold_melds)
        self.hold_jokers = bool(hold_jokers)
        self._planners: dict[bool, MeldPlanner | CompiledMeldPlanner] = {}
        self.config: Any = None
        # the compiled kernel's parameters of the last options seen (see _kernel_params)
        self._kp_key: tuple[Any, ...] | None = None
        self._kp: tuple[np.ndarray, np.ndarray] | None = None
        self._out1 = np.zeros(1, np.int64)

    # -- the compiled kernel's hooks (CompiledDecisions) --------------------------------------

    def _rows_kernel(self) -> Any:
        return lazy_module(KERNELS).greedy500_rows

    def _check_options(self, config: Any) -> None:
        p, d = int(config.num_players), int(config.deck_size)
        if not 2 <= p <= 8 or d not in (52, 54, 104, 108):
            raise ValueError(f"no 500 Rum layout has {p} players and {d} cards")

    def _compiled_ok(self) -> bool:
        if not self.rng_is_generator():
            return False
        compiled = lazy_module(PLANNERS).CompiledMeldPlanner
        for planner in self._planners.values():
            if type(planner) is not compiled:
                return False
        return True

    def _kernel_params(
        self, cfg: Any, obs: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``(params, card values)`` of :func:`~rummy_agents.joker_greedy_kernels.
        greedy500_rows` for these rule options (a view's ``config``, or ``None``: the layout
        inferred from the sizes and the standard options, as :meth:`act_reference` does);
        ``None`` when the arrays do not fit the layout (the reference then decides, and
        raises what it raises).
        """
        try:
            key: tuple[Any, ...] = (self.hold_melds, self.hold_jokers, obs.shape, mask.shape)
            if cfg is not None:
                key += (
                    int(cfg.num_players),
                    int(cfg.deck_size),
                    bool(getattr(cfg, "values_5_10_15", False)),
                    bool(getattr(cfg, "must_meld_discard", False)),
                    bool(getattr(cfg, "deepest_card_new_meld", False)),
                )
            if key == self._kp_key:
                return self._kp
            if cfg is None:
                lay = infer_layout(obs.shape[-1], mask.shape[-1])
                v51015 = must = new = False
            else:
                lay = _layout(key[4], key[5])
                v51015, must, new = key[6:9]
        except (AttributeError, TypeError, ValueError):
            return None
        if obs.shape[-1] != lay.obs_size or mask.shape[-1] != lay.num_actions:
            return None
        planner = self._planner(v51015)  # its node limit, fixed when it was first built
        prm = lazy_module(KERNELS).params500(lay, v51015, must, new, planner.node_limit,
                                             self.hold_melds, self.hold_jokers)  # fmt: skip
        self._kp_key, self._kp = key, (prm, planner.values)
        return self._kp

    def _planner(self, v51015: bool) -> MeldPlanner | CompiledMeldPlanner:
        if v51015 not in self._planners:
            # the compiled planner: MeldPlanner's plans (tests/test_planner_kernels.py), ~100x
            # faster; imported here because it imports this module
            from rummy_agents.planner_kernels import CompiledMeldPlanner

            self._planners[v51015] = CompiledMeldPlanner(v51015, self.node_limit)
        return self._planners[v51015]

    def act_reference(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """Choose a legal action by the Python rules (the readable reference the compiled
        :meth:`act` is tested against: the same actions, the same draws from ``rng``).

        Args:
            observation: the seat's observation dict (``"observation"``, ``"action_mask"``).
            view: the seat's :class:`~rummy_agents.base.SeatView`; only ``view.config`` (the rule
                options) is read. Without a view the layout is inferred from the array sizes
                and the standard options are assumed.

        Returns:
            An action id whose mask entry is 1.

        Raises:
            ValueError: if the mask allows no action.
        """
        obs = np.asarray(observation["observation"], dtype=np.float32)
        mask = np.asarray(observation["action_mask"])
        legal = legal_actions(mask)
        if legal.size == 1:
            return int(legal[0])
        cfg = getattr(view, "config", None)
        if cfg is not None:
            lay = _layout(int(cfg.num_players), int(cfg.deck_size))
        else:
            lay = infer_layout(obs.shape[0], mask.shape[0])
        self._cfg = cfg
        self._lay = lay
        self._mask = mask
        self._legal = legal
        parts = lay.split(obs)
        self._planner_now = self._planner(bool(getattr(cfg, "values_5_10_15", False)))
        self._hand = _counts(parts["hand"])
        self._table = table_melds(parts)
        pile_seq = parts["pile_sequence"]
        n_pile = int((pile_seq > 0).sum())
        self._pile = [int(round(v * 53)) - 1 for v in pile_seq[:n_pile]]  # top first
        phase = int(np.argmax(parts["phase"]))
        if phase == E.PH_DRAW:
            return self._draw()
        if phase == E.PH_CALL:
            return self._call()
        return self._play(parts)

    # -- draws and calls -----------------------------------------------------------------------

    def _take_nets(self, call: bool) -> list[tuple[int, int]]:
        """(net, depth) of every legal TAKE_DISCARD (see the module docstring)."""
        lay, cfg, planner = self._lay, self._cfg, self._planner_now
        base_plan = planner.best(self._hand, self._table)
        base = base_plan.points if base_plan else 0
        must_meld = bool(getattr(cfg, "must_meld_discard", False))
        new_meld = bool(getattr(cfg, "deepest_card_new_meld", False))
        out = []
        for a in self._legal:
            d = int(a) - lay.take_base
            if not 0 <= d < lay.deck_size:
                continue
            taken = self._pile[: d + 1]
            hand = list(self._hand)
            tcount = [0] * NUM_TYPES
            for x in taken:
                hand[x] += 1
                tcount[x] += 1
            oblig = taken[-1] if (call or d >= 1 or must_meld) else -1
            oblig_new = new_meld and not call and oblig >= 0
            plan = turn_plan(planner, hand, self._table, oblig, oblig_new)
            if plan is None:
                continue
            held = sum(min(plan.left[x], tcount[x]) * card_value(x, planner.v51015)
                       for x in range(NUM_TYPES) if tcount[x])  # fmt: skip
            out.append((plan.points - base - held, d))
        return out

    def _draw(self) -> int:
        lay = self._lay
        nets = [(n, d) for n, d in self._take_nets(call=False) if n > 0]
        if nets:
            best = max(n for n, _ in nets)
            return lay.take_base + min(d for n, d in nets if n == best)
        if self._mask[lay.draw_stock]:
            return lay.draw_stock
        if self._mask[lay.pass_action]:
            return lay.pass_action
        return int(self._legal[0])  # pragma: no cover - a draw phase always has one of these

    def _call(self) -> int:
        lay = self._lay
        nets = self._take_nets(call=True)
        if not nets:
            # every legal call is one the planner cannot complete: call the shallowest anyway
            takes = [int(a) for a in self._legal if lay.take_base <= a < lay.meld_base]
            return takes[0] if takes else lay.pass_action
        best = max(n for n, _ in nets)
        return lay.take_base + min(d for n, d in nets if n == best)

    # -- play ------------------------------------------------------------------------------------

    def _step_action(self, step: Step) -> int:
        lay = self._lay
        kind, x, y = step
        if kind == "meld":
            return lay.meld_base + x
        if kind == "layoff":
            return lay.layoff_base + x * lay.max_melds + y
        return lay.joker_base + 2 * x + y

    def _placement_points(self, a: int) -> int:
        """Points a legal meld or lay-off action scores."""
        lay, v = self._lay, self._planner_now.v51015
        if a < lay.layoff_base:
            t = a - lay.meld_base
            if TPL_KIND[t] == 1:
                r = int(TPL_A[t])
                nat = sum(card_value(q * 13 + r, v) for q in range(4) if int(TPL_B[t]) >> q & 1)
                return nat + 15 * int(TPL_C[t])
            s, lo, hi = int(TPL_A[t]), int(TPL_B[t]), int(TPL_C[t])
            pts = 0
            for pos in range(lo, hi + 1):
                x = _pos_card(s, pos)
                pts += placed_value(x, pos, v) if self._hand[x] > 0 else 15
            return pts
        if a < lay.joker_base:
            c, m = divmod(a - lay.layoff_base, lay.max_melds)
            pos = fit_natural(self._table[m], c) if m < len(self._table) else -1
            return placed_value(c, -1 if pos == 14 else pos, v)
        return 15

    def _play(self, parts: Mapping[str, np.ndarray]) -> int:
        lay = self._lay
        oblig = obligation(parts)
        new_meld = bool(getattr(self._cfg, "deepest_card_new_meld", False))
        planner = self._planner_now
        plan = turn_plan(planner, self._hand, self._table, oblig, new_meld and oblig >= 0)
        if plan is not None and self._holding(parts, plan, oblig):
            # lay off naturals onto the table's melds only; keep the rest for going out
            n = len(self._table)
            onto_table = [
                st for st in plan.steps
                if (st[0] == "layoff" and st[2] < n)
                or (st[0] == "joker" and st[1] < n and not self.hold_jokers)
            ]  # fmt: skip
            a = self._first_legal(onto_table)
            return a if a >= 0 else self._discard(parts, keep=plan)
        if plan is not None:
            a = self._first_legal(plan.steps)
            if a >= 0:
                return a
        places = [int(a) for a in self._legal if lay.meld_base <= a < lay.discard_base]
        if places:
            pts = [self._placement_points(a) for a in places]
            return places[int(np.argmax(pts))]
        return self._discard(parts)

    def _first_legal(self, steps: list[Step]) -> int:
        """The action of the first plan step the mask allows; -1 if none."""
        for step in steps:
            a = self._step_action(step)
            if 0 <= a < self._mask.shape[0] and self._mask[a]:
                return a
        return -1

    def _holding(self, parts: Mapping[str, np.ndarray], plan: Plan, oblig: int) -> bool:
        """Does ``hold_melds`` keep this turn's new melds in hand? Not when the plan goes out
        (it leaves at most one card), nor while a taken card is owed to a meld (no discard is
        legal then), nor once some other player holds ``hold_melds`` cards or fewer.
        """
        k = self.hold_melds
        if k is None or oblig >= 0 or sum(plan.left) <= 1:
            return False
        if not any(a >= self._lay.discard_base for a in self._legal):
            return False
        sizes = np.rint(parts["hand_sizes"][1:] * 13)
        return bool(np.all(sizes > k))

    # -- discard ---------------------------------------------------------------------------------

    def _discard(self, parts: Mapping[str, np.ndarray], keep: Plan | None = None) -> int:
        lay = self._lay
        cands = [int(a) - lay.discard_base for a in self._legal if a >= lay.discard_base]
        cands = [c for c in cands if c < NUM_TYPES]
        if not cands:
            return int(self._legal[0])  # PASS or whatever else is left
        if keep is not None:
            # throw only cards the plan leaves in hand: the held melds stay whole
            loose = [c for c in cands if keep.left[c] > 0]
            cands = loose or cands
        vals = self._planner_now.values
        hand = np.array(self._hand, np.int64)
        known = parts["known"][0] if parts["known"].shape[0] else np.zeros(NUM_TYPES)
        nxt = np.rint(known * 2).astype(np.int64)
        pile = np.rint(parts["pile_counts"] * 2).astype(np.int64)
        scores = [
            greedy_discard_score(
                hand, nxt, pile, any(fit_natural(m, c) >= 0 for m in self._table), c, vals
            )
            for c in cands
        ]
        best = max(scores)
        ties = [c for c, s in zip(cands, scores, strict=True) if s == best]
        c = ties[int(self.rng.integers(len(ties)))] if len(ties) > 1 else ties[0]
        return lay.discard_base + c


__all__ = [
    "CompiledDecisions",
    "FiveHundredRumGreedyAgent",
    "MeldPlanner",
    "Plan",
    "infer_layout",
    "lazy_module",
    "obligation",
    "table_melds",
    "turn_plan",
]
