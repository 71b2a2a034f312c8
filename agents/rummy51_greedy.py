"""A greedy rule-based Rummy 51 agent that acts only from its seat's observation and mask.

:class:`Rummy51GreedyAgent` reads the flat observation through
:meth:`rummy_env.encodings.rummy51.Layout.split` (own hand, the discard pile, the cards each
other player is known to hold, the table melds, who has opened, the phase, the points laid
towards the opening this turn, the obligation and the card taken this turn) and the action mask;
from the :class:`~rummy_agents.base.SeatView` it reads only the rule options (``view.config``). It
never looks at hidden state and only returns actions whose mask entry is 1, so it plays every
rule option with 2 to 6 players (hands or matches).

Values: a card's *penalty* is what it costs left in hand (A 11, 2-10 face value, J Q K 10,
joker 25); a meld's *opening points* count jokers as the card they stand for (a low ace 1).

**Meld planner.** The plan of a turn is found by the search of
:class:`rummy_agents.five_hundred_rum_greedy.MeldPlanner`
(disjoint new melds by template, branching on the lowest
natural left, then a greedy lay-off pass of naturals and jokers onto the table and the new melds)
with Rummy 51's objective and constraints: it maximises the *penalty removed from the hand*
(so it melds jokers and high cards first), keeps a card it may discard (not the one just taken
from the pile, unless another copy is held), lays off only once the player has opened or the
plan's new melds reach the opening, and before the opening a plan with any meld is valid only
if its new melds bring the turn's opening points to ``opening_threshold`` (with the taken
discard in one of them under ``discard_draw_requires_opening``). The *free arrangement* is the
same search with new melds only and no threshold: the melds the hand holds. The agent runs
this search compiled (:class:`rummy_agents.planner_kernels.CompiledRummy51Planner`: the same
plans); :class:`Rummy51Planner` is the reference it is tested against.

Its rules, by phase:

**Draw.** It takes the top discard ``d`` (when the mask allows) if

- it has opened and ``d`` is a natural that can take a joker's place on the table, or the best
  plan with ``d`` removes at least ``penalty(d)`` more than the best plan without it;
- it has not opened and the opening becomes reachable with ``d`` (or, reachable anyway, the
  plan with ``d`` removes at least ``penalty(d)`` more); or, the opening out of reach either
  way, ``d`` adds at least ``penalty(d)`` to the free arrangement (it completes a meld in hand).

Otherwise it draws from the stock.

**Play.** Once opened, it first retrieves a joker whenever the mask allows one (choosing the
retrieval after which the plan removes the most). Otherwise it plans the turn and plays the
plan's first step the mask allows: new melds in the plan's order (the one holding an owed
discard first), then lay-offs of naturals, then of jokers. So it opens as soon as the threshold
is reachable, laying every meld of the plan, and once opened lays off everything it can. When
the mask allows no step of the plan but some meld or lay-off, it plays the legal one removing
the most penalty (this only covers templates the planner does not search). Then it discards.

**Discard.** Among the legal discards it throws the card of the lowest *tier*, and within a
tier the one with the highest penalty (ties broken by the agent's random generator, so the
agent is deterministic given its seed):

0. safe and loose: no one can use it, and it is not next to another card of its own hand;
1. safe but near its own cards (same rank, or same suit at most two ranks away);
2. unsafe: it lays off on a table meld, takes a joker's place on the table, or is of the same
   rank as (another suit), or of the same suit within two ranks of, a card the next player
   still in the hand is known to hold (taken from the pile or retrieved);
3. it belongs to the free arrangement (never break a meld it could still lay);
4. a joker.

**Options** (off by default, all on in the arena's ``greedy_plus``): ``take_gain="any"``
takes the top discard whenever it adds anything to the turn's plan (or to the free
arrangement), not only when it adds its own penalty; ``near_order=True`` throws, within tier
1, the card with the fewest :func:`links` to the rest of the hand first;
``joker_layoff="out"`` lays a joker off onto the table only in the turn it goes out (a joker on
the table is one the next player may retrieve); ``hold_melds=k`` keeps new melds in hand once
opened, laying them only in the turn it goes out, while every other player still holds more
than ``k`` cards (``greedy_plus``: 3). ``hold_open=k`` keeps the *opening* in hand until the
turn it goes out (a Rummy) while every other player holds more than ``k`` cards: the opponent
then has no melds to lay off onto and no jokers to retrieve, and pays the Rummy's 25. How
strong each option plays is measured in ``docs/agents.md``.

**Compiled decisions.** ``act`` runs these rules compiled, reading the observation and
deciding in one numba call (:func:`rummy_agents.joker_greedy_kernels.greedy51_rows`), and
``act_batch(observations, masks)`` decides many rows in one call once the agent is bound to
its rule options (``bind(config)``). Both choose exactly the actions of ``act_reference`` (the
Python rules, kept as the readable reference) and draw the same tie-breaks from the agent's
generator (``tests/test_joker_greedy_compiled.py``).

Example:
    >>> from rummy_env import rummy51_v1
    >>> from rummy_agents.base import SeatView
    >>> env = rummy51_v1.raw_env()
    >>> env.reset(seed=0)
    >>> agent = Rummy51GreedyAgent(seed=0)
    >>> name = env.agent_selection
    >>> a = agent.act(env.observe(name), SeatView(env, name))
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from rummy_agents.base import legal_actions
from rummy_agents.five_hundred_rum_greedy import (
    KERNELS,
    CompiledDecisions,
    Meld,
    MeldPlanner,
    Plan,
    Step,
    _counts,
    _place,
    _pos_card,
    fit_natural,
    lazy_module,
    table_melds,
)
from rummy_agents.planner_kernels import CompiledRummy51Planner
from rummy_env.core.jmelds import TPL_A, TPL_B, TPL_C, TPL_KIND
from rummy_env.encodings import rummy51 as E
from rummy_env.rules.rummy51.kernels import TPL_VAL

JOKER = 52
NUM_TYPES = 53
PENALTY = [11 if c % 13 == 0 else min(c % 13 + 1, 10) for c in range(52)] + [25]
"""Penalty of each card type left in hand (joker 25)."""


def meld_points(t: int) -> int:
    """Opening points of meld template ``t`` (jokers count as the card they stand for)."""
    return int(TPL_VAL[t])


def retrieve_card(m: Meld, k: int) -> int:
    """Natural that takes a joker's place in meld ``m`` at run position / group suit ``k``
    (-1: none; groups of 4 never release their jokers), as ``kernels.retrieve_fit``.
    """
    kind, key, _, _, nat, jok = m
    if kind == 1:
        if k >= 4 or jok < 1 or nat >> k & 1 or bin(nat).count("1") + jok != 3:
            return -1
        return k * 13 + key
    if not jok >> k & 1:
        return -1
    return _pos_card(key, k)


def retrieved(m: Meld, k: int) -> Meld:
    """Meld ``m`` after its joker at ``k`` is replaced by the natural."""
    out = list(m)
    out[4] |= 1 << k
    out[5] = out[5] - 1 if m[0] == 1 else out[5] & ~(1 << k)
    return out


def can_retrieve(table: list[Meld], c: int) -> bool:
    """Can natural ``c`` take a joker's place in some table meld?"""
    if c >= 52:
        return False
    s, r = divmod(c, 13)
    for m in table:
        if m[5] == 0:
            continue
        ks = (s,) if m[0] == 1 else ((0, 13) if r == 0 else (r,))
        if any(retrieve_card(m, k) == c for k in ks):
            return True
    return False


def near(a: int, b: int) -> bool:
    """Could naturals ``a`` and ``b`` meet in a meld: same rank and another suit, or same suit
    at most two ranks apart (the ace next to both the 2 and the king)?
    """
    sa, ra = divmod(a, 13)
    sb, rb = divmod(b, 13)
    if ra == rb:
        return sa != sb
    return sa == sb and rank_gap(ra, rb) <= 2


def rank_gap(ra: int, rb: int) -> int:
    """Ranks between ``ra`` and ``rb`` within a suit, the ace (0) next to both the 2 and the K."""
    gap = abs(ra - rb)
    return min(gap, 13 - gap) if 0 in (ra, rb) else gap


NEAR: tuple[tuple[int, ...], ...] = tuple(
    tuple(x for x in range(52) if near(c, x)) for c in range(52)
)
"""The naturals ``near`` each natural, ascending (never the card itself): the discard tiers
read a hand through these few cards instead of testing all 52."""


class Rummy51Planner(MeldPlanner):
    """The turn's best plan by Rummy 51's objective (see the module docstring).

    Reuses :class:`rummy_agents.five_hundred_rum_greedy.MeldPlanner`'s template enumeration and
    joker placement;
    ``Plan.points`` is the penalty the plan removes from the hand.

    Args:
        node_limit: search nodes per plan before the best plan so far is returned.
    """

    def __init__(self, node_limit: int = 3000) -> None:
        super().__init__(False, node_limit)

    def best(  # type: ignore[override]
        self,
        hand: list[int],
        table: list[Meld],
        *,
        opened: bool,
        need: int = 0,
        must_open: bool = False,
        oblig: int = -1,
        taken: int = -1,
        layoffs: bool = True,
    ) -> Plan | None:
        """The plan removing the most penalty, or ``None`` when no plan is valid.

        Args:
            hand: 53 card counts (type 52 = joker).
            table: the table melds, slot order.
            opened: the player has opened (lay-offs allowed, no threshold).
            need: opening points the new melds must still reach (not opened).
            must_open: an empty plan is not valid (an opening begun this turn, or an owed
                discard).
            oblig: card type that must go into a new meld (-1: none).
            taken: card type taken from the pile this turn (not discardable unless it is
                melded or another copy is held; -1: none).
            layoffs: allow lay-offs (``False``: the free arrangement, new melds only).
        """
        self._table = table
        self._opened = opened
        self._need = 0 if opened else need
        self._must_open = must_open
        self._oblig = oblig
        self._taken = taken
        self._layoffs = layoffs
        self._hand0 = hand
        self._best: Plan | None = None
        self._nodes = 0
        self._search(list(hand), [0] * NUM_TYPES, [], [], 0, 0, oblig < 0)
        return self._best

    def _search(  # type: ignore[override]
        self,
        avail: list[int],
        skipped: list[int],
        new: list[Meld],
        steps: list[Step],
        removed: int,
        pts: int,
        sat: bool,
    ) -> None:
        self._nodes += 1
        c = next((x for x in range(52) if avail[x] > 0), -1)
        if c < 0 or self._nodes > self.node_limit:
            self._leaf(avail, skipped, new, steps, removed, pts, sat)
            return
        for t, meld, taken, j, _ in self._templates_with(c, avail, skipped):
            for x in taken:
                avail[x] -= 1
            avail[JOKER] -= j
            hit = (self._oblig in taken) or (self._oblig == JOKER and j > 0)
            gain = sum(PENALTY[x] for x in taken) + 25 * j
            new.append(meld)
            # the meld holding the owed discard is laid first (before the opening is reached)
            if hit and not sat:
                steps.insert(0, ("meld", t, 0))
                new.insert(0, new.pop())
            else:
                steps.append(("meld", t, 0))
            self._search(
                avail, skipped, new, steps, removed + gain, pts + meld_points(t), sat or hit
            )
            if hit and not sat:
                steps.pop(0)
                new.pop(0)
            else:
                steps.pop()
                new.pop()
            avail[JOKER] += j
            for x in taken:
                avail[x] += 1
        avail[c] -= 1  # c stays in hand (it may still be laid off)
        skipped[c] += 1
        self._search(avail, skipped, new, steps, removed, pts, sat)
        skipped[c] -= 1
        avail[c] += 1

    def _discardable(self, left: list[int]) -> bool:
        """Does ``left`` hold a card the player may discard?"""
        ts = self._taken
        free_ts = ts < 0 or left[ts] < self._hand0[ts]  # a taken card that was melded is free
        return any(n > 0 and (x != ts or free_ts or n >= 2) for x, n in enumerate(left))

    def _leaf(  # type: ignore[override]
        self,
        avail: list[int],
        skipped: list[int],
        new: list[Meld],
        steps: list[Step],
        removed: int,
        pts: int,
        sat: bool,
    ) -> None:
        if not sat or (steps and pts < self._need) or (self._must_open and not steps):
            return
        left = [a + b for a, b in zip(avail, skipped, strict=True)]
        if not self._discardable(left):
            return
        plan_steps = list(steps)
        if self._layoffs and (self._opened or steps):
            removed = self._lay_off(left, new, plan_steps, removed)
        if self._best is None or removed > self._best.points:
            self._best = Plan(removed, plan_steps, left)

    def _lay_off(self, left: list[int], new: list[Meld], steps: list[Step], removed: int) -> int:
        """Greedy lay-off pass (naturals, then a joker; repeated while anything fits), keeping
        a card to discard; returns the penalty removed.
        """
        melds = [list(m) for m in self._table] + [list(m) for m in new]
        changed = True
        while changed:
            changed = False
            for c in range(52):
                while left[c] > 0:
                    k = next((k for k, m in enumerate(melds) if fit_natural(m, c) >= 0), -1)
                    if k < 0:
                        break
                    left[c] -= 1
                    if not self._discardable(left):
                        left[c] += 1
                        break
                    _place(melds[k], c, fit_natural(melds[k], c))
                    removed += PENALTY[c]
                    steps.append(("layoff", c, k))
                    changed = True
            if left[JOKER] > 0:
                spot = self._joker_spot(melds, left)
                if spot is not None:
                    left[JOKER] -= 1
                    if not self._discardable(left):
                        left[JOKER] += 1
                        continue
                    k, e, pos = spot
                    _place(melds[k], JOKER, pos)
                    removed += 25
                    steps.append(("joker", k, e))
                    changed = True
        return removed


# ---------------------------------------------------------------------------------------------
# Reading the observation


@lru_cache(maxsize=8)
def _layout(num_players: int) -> E.Layout:
    return E.Layout(num_players)


def infer_layout(obs_size: int, num_actions: int) -> E.Layout:
    """The layout whose observation and action sizes match (for use without a view).

    Raises:
        ValueError: if no 2-6 player layout matches.
    """
    for p in range(2, 7):
        lay = _layout(p)
        if lay.num_actions == num_actions and lay.obs_size == obs_size:
            return lay
    raise ValueError(f"no Rummy 51 layout has {obs_size} observations and {num_actions} actions")


def _one_hot(x: np.ndarray) -> int:
    return int(np.argmax(x)) if x.max() > 0.5 else -1


# ---------------------------------------------------------------------------------------------
# The agent


TAKE_GAINS = ("penalty", "any")
JOKER_LAYOFFS = ("always", "out")


def links(hand: list[int], c: int) -> int:
    """How strongly natural ``c`` is tied to the rest of the hand: 2 for each other card of its
    rank (another suit) or of its suit one rank away, 1 for each of its suit two ranks away
    (the ace next to the 2 and the king); a second copy of ``c`` does not count.
    """
    s, r = divmod(c, 13)
    t = 0
    for x in NEAR[c]:
        if hand[x]:
            t += 1 if x // 13 == s and rank_gap(r, x % 13) == 2 else 2
    return t


class Rummy51GreedyAgent(CompiledDecisions):
    """Greedy Rummy 51 player (rules in the module docstring).

    Four options change its rules (the defaults are the rules above; all changed:
    ``greedy_plus`` in the arena registry):

    Args:
        seed: seed of the generator that breaks ties between equally ranked discards.
        node_limit: meld planner search nodes per plan.
        take_gain: what a top discard must add to the turn's plan (or, the opening out of
            reach, to the free arrangement) to be taken: ``"penalty"`` (at least its own
            penalty) or ``"any"`` (more than nothing).
        near_order: within the tier of cards near its own, throw the card with the fewest
            :func:`links` first (then the highest penalty) instead of the highest penalty.
        joker_layoff: when to lay a joker off onto the table: ``"always"`` (whenever the plan
            does) or ``"out"`` (only in the turn it goes out: a joker on the table is one the
            next player may retrieve).
        hold_melds: once opened, keep new melds in hand (laying them only in the turn it goes
            out) while every other player still in the hand holds more than this many cards;
            ``None``: never hold (lay every meld of the plan at once). Lay-offs of naturals
            are not held.
        hold_open: before opening, keep the opening melds in hand (opening only in the turn
            it goes out, a Rummy) while every other player still in the hand holds more than
            this many cards; ``None``: open as soon as the threshold is reachable. An opening
            begun this turn, or a taken discard owed to it, is always completed.

    Raises:
        ValueError: for an unknown ``take_gain`` or ``joker_layoff``, or a negative
            ``hold_melds`` or ``hold_open``.
    """

    name = "greedy"

    def __init__(
        self,
        seed: int | None = None,
        node_limit: int = 3000,
        take_gain: str = "penalty",
        near_order: bool = False,
        joker_layoff: str = "always",
        hold_melds: int | None = None,
        hold_open: int | None = None,
    ) -> None:
        if take_gain not in TAKE_GAINS:
            raise ValueError(f"take_gain must be one of {TAKE_GAINS}, got {take_gain!r}")
        if joker_layoff not in JOKER_LAYOFFS:
            raise ValueError(f"joker_layoff must be one of {JOKER_LAYOFFS}, got {joker_layoff!r}")
        for key, k in (("hold_melds", hold_melds), ("hold_open", hold_open)):
            if k is not None and (isinstance(k, bool) or int(k) < 0):
                raise ValueError(f"{key} must be None or a count >= 0, got {k!r}")
        self._init_rng(seed)  # self.rng: default_rng(seed), built on first use
        # compiled: Rummy51Planner's plans (tests/test_planner_kernels.py), much faster
        self.planner: Rummy51Planner | CompiledRummy51Planner = CompiledRummy51Planner(node_limit)
        self.take_gain = take_gain
        self.near_order = bool(near_order)
        self.joker_layoff = joker_layoff
        self.hold_melds = None if hold_melds is None else int(hold_melds)
        self.hold_open = None if hold_open is None else int(hold_open)
        self.config: Any = None
        # the compiled kernel's parameters of the last options seen (see _kernel_params)
        self._kp_key: tuple[Any, ...] | None = None
        self._kp: tuple[np.ndarray] | None = None
        self._out1 = np.zeros(1, np.int64)

    # -- the compiled kernel's hooks (CompiledDecisions) --------------------------------------

    def _rows_kernel(self) -> Any:
        return lazy_module(KERNELS).greedy51_rows

    def _check_options(self, config: Any) -> None:
        p = int(config.num_players)
        if not 2 <= p <= 6:
            raise ValueError(f"no Rummy 51 layout has {p} players")

    def _compiled_ok(self) -> bool:
        return self.rng_is_generator() and type(self.planner) is CompiledRummy51Planner

    def _kernel_params(
        self, cfg: Any, obs: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray] | None:
        """``(params,)`` of :func:`~rummy_agents.joker_greedy_kernels.greedy51_rows` for these
        rule options (a view's ``config``, or ``None``: the layout inferred from the sizes and
        the default options, as :meth:`act_reference` does); ``None`` when the arrays do not
        fit the layout (the reference then decides, and raises what it raises).
        """
        try:
            key: tuple[Any, ...] = (
                self.take_gain,
                self.near_order,
                self.joker_layoff,
                self.hold_melds,
                self.hold_open,
                int(self.planner.node_limit),
                obs.shape,
                mask.shape,
            )
            if cfg is not None:
                key += (
                    int(cfg.num_players),
                    int(getattr(cfg, "opening_threshold", 51)),
                    bool(getattr(cfg, "discard_draw_requires_opening", False)),
                )
            if key == self._kp_key:
                return self._kp
            if cfg is None:
                lay = infer_layout(obs.shape[-1], mask.shape[-1])
                threshold, dd_open = 51, False
            else:
                lay = _layout(key[8])
                threshold, dd_open = key[9:11]
        except (AttributeError, TypeError, ValueError):
            return None
        if obs.shape[-1] != lay.obs_size or mask.shape[-1] != lay.num_actions:
            return None
        prm = lazy_module(KERNELS).params51(lay, threshold, dd_open, key[5], self.take_gain,
                                            self.near_order, self.joker_layoff,
                                            self.hold_melds, self.hold_open)  # fmt: skip
        self._kp_key, self._kp = key, (prm,)
        return self._kp

    def act_reference(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """Choose a legal action by the Python rules (the readable reference the compiled
        :meth:`act` is tested against: the same actions, the same draws from ``rng``).

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
        obs = np.asarray(observation["observation"], dtype=np.float32)
        mask = np.asarray(observation["action_mask"])
        legal = legal_actions(mask)
        if legal.size == 1:
            return int(legal[0])
        cfg = getattr(view, "config", None)
        if cfg is not None:
            lay = _layout(int(cfg.num_players))
        else:
            lay = infer_layout(obs.shape[0], mask.shape[0])
        self._lay, self._mask, self._legal = lay, mask, legal
        self._threshold = int(getattr(cfg, "opening_threshold", 51))
        self._dd_open = bool(getattr(cfg, "discard_draw_requires_opening", False))
        parts = lay.split(obs)
        self._parts = parts
        self._hand = _counts(parts["hand"])
        self._table = table_melds(parts)
        self._opened = bool(parts["opened"][0] > 0.5)
        if int(np.argmax(parts["phase"])) == E.PH_DRAW:
            return self._draw()
        return self._play()

    # -- planning ----------------------------------------------------------------------------------

    def _plan(self, hand: list[int], table: list[Meld], taken: int, oblig: int = -1) -> Plan | None:
        """The turn's best valid plan (``None``: none; an empty plan when nothing is laid)."""
        parts = self._parts
        laid = int(round(float(parts["opening_points"][0]) * max(self._threshold, 1)))
        laid = laid if not self._opened else 0
        return self.planner.best(
            hand,
            table,
            opened=self._opened,
            need=self._threshold - laid,
            must_open=laid > 0 or oblig >= 0,
            oblig=oblig,
            taken=taken,
        )

    def _free(self, hand: list[int], taken: int = -1) -> Plan | None:
        """The free arrangement: the most penalty the hand's own new melds hold."""
        return self.planner.best(hand, [], opened=False, taken=taken, layoffs=False)

    # -- draw ----------------------------------------------------------------------------------

    def _draw(self) -> int:
        lay = self._lay
        pile = self._parts["pile_sequence"]
        if not self._mask[lay.take_discard] or pile[0] <= 0:
            return lay.draw_stock
        if not self._mask[lay.draw_stock]:
            return lay.take_discard
        d = int(round(float(pile[0]) * 53)) - 1
        return lay.take_discard if self._wants(d) else lay.draw_stock

    def _wants(self, d: int) -> bool:
        """Is the top discard ``d`` worth taking (see the module docstring)?"""
        hand = self._hand
        with_d = list(hand)
        with_d[d] += 1
        if self._opened and can_retrieve(self._table, d):
            return True
        oblig = d if self._dd_open and not self._opened else -1
        p0 = self._plan(hand, self._table, -1)
        p1 = self._plan(with_d, self._table, d, oblig)
        v0 = p0.points if p0 is not None and (self._opened or p0.steps) else None
        v1 = p1.points if p1 is not None and (self._opened or p1.steps) else None
        need = PENALTY[d] if self.take_gain == "penalty" else 1  # gains are whole points
        if v1 is not None:
            return v0 is None or v1 - v0 >= need
        if v0 is not None:
            return False
        f0, f1 = self._free(hand), self._free(with_d, d)
        return f0 is not None and f1 is not None and f1.points - f0.points >= need

    # -- play ------------------------------------------------------------------------------------

    def _step_action(self, step: Step) -> int:
        lay = self._lay
        kind, x, y = step
        if kind == "meld":
            return lay.meld_base + x
        if kind == "layoff":
            return lay.layoff_base + x * lay.max_melds + y
        return lay.joker_base + 2 * x + y

    def _taken(self) -> int:
        return _one_hot(self._parts["taken_single"])

    def _play(self) -> int:
        lay, mask = self._lay, self._mask
        taken = self._taken()
        retrievals = [int(a) for a in self._legal if lay.retrieve_base <= a < lay.discard_base]
        if retrievals:
            return self._best_retrieval(retrievals, taken)
        oblig = _one_hot(self._parts["obligation"])
        plan = self._plan(self._hand, self._table, taken, oblig)
        # what the options hold back, unless the plan goes out (or a retrieved joker is owed)
        out = plan is not None and sum(plan.left) <= 1
        free = out or self._parts["owed_jokers"][0] > 0
        keep_joker = self.joker_layoff == "out" and not free
        keep_melds = not free and self._holding(oblig)
        if plan is not None:
            for step in plan.steps:
                if (step[0] == "joker" and keep_joker) or (step[0] == "meld" and keep_melds):
                    continue
                a = self._step_action(step)
                if 0 <= a < mask.shape[0] and mask[a]:
                    return a
        lo = lay.layoff_base if keep_melds else lay.meld_base
        hi = lay.joker_base if keep_joker else lay.retrieve_base
        places = [int(a) for a in self._legal if lo <= a < hi]
        if places:
            gains = [self._placement_gain(a) for a in places]
            return places[int(np.argmax(gains))]
        return self._discard()

    def _holding(self, oblig: int) -> bool:
        """Do the options keep this turn's new melds in hand? Once opened ``hold_melds`` does,
        before opening ``hold_open`` (unless an opening was begun this turn or a taken discard
        is owed to it), each while every other player still in the hand holds more cards than
        its count.
        """
        k = self.hold_melds if self._opened else self.hold_open
        if k is None:
            return False
        if not self._opened and (oblig >= 0 or self._parts["opening_points"][0] > 0):
            return False
        sizes = np.rint(self._parts["hand_sizes"] * 13)
        return all(sizes[i] > k for i in self._others_in_hand())

    def _others_in_hand(self) -> list[int]:
        """The other players still in the hand (not eliminated from the match), seat-relative,
        in turn order from the next.
        """
        elim = self._parts["eliminated"]
        return [i for i in range(1, elim.shape[0]) if elim[i] < 0.5]

    def _best_retrieval(self, actions: list[int], taken: int) -> int:
        """The legal retrieval after which the plan removes the most penalty."""
        lay = self._lay
        best, best_v = actions[0], -1
        for a in actions:
            m, k = divmod(a - lay.retrieve_base, 14)
            c = retrieve_card(self._table[m], k) if m < len(self._table) else -1
            if c < 0:
                continue
            hand = list(self._hand)
            hand[c] -= 1
            hand[JOKER] += 1
            table = list(self._table)
            table[m] = retrieved(table[m], k)
            plan = self._plan(hand, table, -1 if c == taken else taken)
            v = plan.points + PENALTY[c] if plan is not None else PENALTY[c]
            if v > best_v:
                best, best_v = a, v
        return best

    def _placement_gain(self, a: int) -> int:
        """Penalty a legal meld or lay-off action removes from the hand."""
        lay, hand = self._lay, self._hand
        if a < lay.layoff_base:
            t = a - lay.meld_base
            if TPL_KIND[t] == 1:
                r, suits = int(TPL_A[t]), int(TPL_B[t])
                nat = sum(PENALTY[q * 13 + r] for q in range(4) if suits >> q & 1)
                return nat + 25 * int(TPL_C[t])
            s, lo, hi = int(TPL_A[t]), int(TPL_B[t]), int(TPL_C[t])
            return sum(
                PENALTY[_pos_card(s, p)] if hand[_pos_card(s, p)] > 0 else 25
                for p in range(lo, hi + 1)
            )
        if a < lay.joker_base:
            return PENALTY[(a - lay.layoff_base) // lay.max_melds]
        return 25

    # -- discard ---------------------------------------------------------------------------------

    def _next_known(self) -> list[int]:
        """Cards the next player still in the hand is known to hold (seat-relative order)."""
        others = self._others_in_hand()
        return _counts(self._parts["known"][others[0] - 1]) if others else [0] * NUM_TYPES

    def _discard(self) -> int:
        lay = self._lay
        cands = [int(a) - lay.discard_base for a in self._legal if a >= lay.discard_base]
        if not cands:
            return int(self._legal[0])  # pragma: no cover - a play phase always has a move
        free = self._free(self._hand, self._taken())
        protected = list(self._hand) if free is None else [
            h - x for h, x in zip(self._hand, free.left, strict=True)
        ]  # fmt: skip
        nxt = self._next_known()
        keys = []
        for c in cands:
            tier = self._tier(c, protected, nxt)
            tie = links(self._hand, c) if self.near_order and tier == 1 else 0
            keys.append((tier, tie, -PENALTY[c]))
        best = min(keys)
        ties = [c for c, k in zip(cands, keys, strict=True) if k == best]
        c = ties[int(self.rng.integers(len(ties)))] if len(ties) > 1 else ties[0]
        return lay.discard_base + c

    def _tier(self, c: int, protected: list[int], nxt: list[int]) -> int:
        if c == JOKER:
            return 4
        # a card the free arrangement melds (a copy not in a meld may go)
        if protected[c] > 0 and self._hand[c] - protected[c] < 1:
            return 3
        if any(fit_natural(m, c) >= 0 for m in self._table) or can_retrieve(self._table, c):
            return 2
        if any(nxt[x] for x in NEAR[c]):
            return 2
        hand = self._hand
        if any(hand[x] for x in NEAR[c]):
            return 1
        return 0


__all__ = [
    "JOKER_LAYOFFS",
    "TAKE_GAINS",
    "Rummy51GreedyAgent",
    "Rummy51Planner",
    "infer_layout",
    "links",
    "meld_points",
    "near",
]
