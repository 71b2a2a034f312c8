"""Rule-based Gin Rummy agents: the EAAI "simple player" and a novice.

Both agents act only from what their seat sees: the flat observation (read through the
observation pieces of :mod:`rummy_env.encodings.gin_rummy`, see :func:`read_observation`) and the
action mask. Deadwood is always
exact (``rummy_env.core.melds`` solver). They work in every Gin configuration: Oklahoma knock
limits and spade doubles (the mask says when a knock is allowed), the eleven-card deal (the first
move is a discard or a knock), the fiftieth-card offer and knock phases, match episodes, and
manual melds (``auto_meld=False``: the knocker declares a minimum-deadwood arrangement, the
defender melds and lays off to minimise its final deadwood).

``act`` and ``act_batch`` run compiled code (:mod:`rummy_agents.gin_rules_kernels`: one decision,
or a batch of rows in order with every tie drawn from the agent's generator), with exactly the
moves and the generator use of the Python rules below, which stay as the readable reference
(``act_reference``, ``act_batch_reference``; they also play the rare malformed rows the compiled
code leaves to them). ``tests/test_gin_rules_compiled.py`` compares the two.

Helpers on 52-bit hand masks (bit ``suit * 13 + rank``) are public for tests and other agents:
:func:`hand_deadwood`, :func:`deadwood_per_discard`, :func:`completes_meld`,
:func:`in_best_meld`, :func:`knocker_meld_plan`, :func:`defender_plan`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from rummy_agents.base import legal_actions
from rummy_agents.gin_rules_kernels import (
    FALLBACK,
    KIND_NOVICE,
    KIND_PLANNER,
    KIND_SIMPLE,
    act_rows,
    decide,
    decide_signature,
)

# the planner's kernels and tables, under the names they had when they lived here
from rummy_agents.gin_rules_kernels import MELD3 as _MELD3
from rummy_agents.gin_rules_kernels import OBS_SIZE as _KERNEL_OBS_SIZE
from rummy_agents.gin_rules_kernels import draw_outlook as _draw_outlook
from rummy_agents.gin_rules_kernels import feed_risk as _feed_risk  # noqa: F401
from rummy_agents.gin_rules_kernels import plan_discards as _plan_discards
from rummy_agents.pcg64 import SeededGenerator
from rummy_env.core.melds import (
    GIN_MELD_KINDS,
    GIN_MELD_MASKS,
    GIN_VALUES,
    GROUP_NOPT,
    GROUP_OPTS,
    INF_DEADWOOD,
    SPREAD,
    SUIT_DEADWOOD,
    min_deadwood,
    min_deadwood_per_discard,
)
from rummy_env.encodings import gin_rummy as E

_MELDS = [int(m) for m in GIN_MELD_MASKS]
_MELD_SIZES = [bin(m).count("1") for m in _MELDS]
_MELD_IS_RUN = [bool(k) for k in GIN_MELD_KINDS]
_VALUES = [int(v) for v in GIN_VALUES]
_OBS_SIZE_AUTO = E.observation_size(True)
_OBS_SIZE_MANUAL = E.observation_size(False)
TAKE_RULES = ("any_meld", "best_meld")


@lru_cache(maxsize=2)
def _piece_slices(auto_meld: bool) -> tuple[tuple[str, int, int, tuple[int, ...]], ...]:
    return tuple((p.name, p.offset, p.size, p.shape) for p in E.observation_pieces(auto_meld))


def read_observation(obs: np.ndarray, auto_meld: bool) -> dict[str, np.ndarray]:
    """Named views of one flat observation: the same as
    :func:`rummy_env.encodings.gin_rummy.split_observation`, with the piece table cached (that
    function rebuilds it on every call, which dominates an agent's time per decision).
    """
    return {
        name: obs[off : off + size].reshape(shape)
        for name, off, size, shape in _piece_slices(auto_meld)
    }


# ---------------------------------------------------------------------------------------------
# Hand arithmetic on 52-bit masks


def mask_of(cards01: np.ndarray) -> int:
    """52-bit mask of a 0/1 (or 0.0/1.0) vector over the 52 cards."""
    m = 0
    for c in np.flatnonzero(np.asarray(cards01) > 0.5):
        m |= 1 << int(c)
    return m


def cards_of(mask: int) -> list[int]:
    """Card ids of a mask, ascending."""
    return [c for c in range(52) if mask >> c & 1]


def value_of(mask: int) -> int:
    """Total Gin value of the cards of a mask (ace 1, faces 10)."""
    return sum(_VALUES[c] for c in range(52) if mask >> c & 1)


def hand_deadwood(mask: int) -> int:
    """Exact minimum deadwood of a hand of 0 to 11 cards."""
    return int(min_deadwood(np.uint64(mask), SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD))


def deadwood_per_discard(mask: int) -> np.ndarray:
    """(52,) int64: exact minimum deadwood after discarding each card of the hand
    (``INF_DEADWOOD`` for cards not in it).
    """
    out = np.empty(52, np.int64)
    min_deadwood_per_discard(np.uint64(mask), out, SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD)
    return out


def completes_meld(card: int, hand: int) -> bool:
    """True if ``card`` would belong to some meld (any meld, not necessarily a best arrangement)
    made with the cards of ``hand`` - Neller's ``willDrawFaceUpCard`` test.
    """
    full = hand | 1 << card
    bit = 1 << card
    return any(m & bit and m & full == m for m in _MELDS)


def in_best_meld(card: int, hand: int) -> bool:
    """True if some minimum-deadwood arrangement of ``hand + card`` melds ``card``.

    Exact: the best arrangement that melds ``card`` costs ``min over melds t holding card`` of
    ``deadwood(hand + card - t)``; ``card`` is melded in a best arrangement iff that equals
    ``deadwood(hand + card)``.
    """
    full = hand | 1 << card
    bit = 1 << card
    best = hand_deadwood(full)
    return any(m & bit and m & full == m and hand_deadwood(full & ~m) == best for m in _MELDS)


def knocker_meld_plan(hand: int) -> list[int]:
    """Meld templates (ids into ``GIN_MELD_MASKS``) of a minimum-deadwood arrangement of
    ``hand``, in the order to declare them.

    Greedy and exact: a meld ``t`` belongs to some best arrangement iff
    ``deadwood(hand - t) == deadwood(hand)``; the longest such meld is taken first (ties: the
    lowest template id), then the rest of the hand is planned the same way. Every meld has 3+
    cards, so a 10-card hand never needs more than three (the meld slots of the env).
    """
    plan: list[int] = []
    rest = hand
    target = hand_deadwood(rest)
    while True:
        best_t = -1
        for t, m in enumerate(_MELDS):
            if m & rest == m and hand_deadwood(rest & ~m) == target:
                if best_t < 0 or _MELD_SIZES[t] > _MELD_SIZES[best_t]:
                    best_t = t
        if best_t < 0:
            return plan
        plan.append(best_t)
        rest &= ~_MELDS[best_t]


def _fits(card: int, meld: int) -> int:
    """Lay-off fit of ``card`` on a table meld: 0 none, 1 a group's 4th card, 2 a run end."""
    if meld >> card & 1 or meld == 0:
        return 0
    cs = cards_of(meld)
    lo, hi = cs[0], cs[-1]
    if all(c % 13 == lo % 13 for c in cs):
        return 1 if len(cs) == 3 and card % 13 == lo % 13 else 0
    if card // 13 != lo // 13:
        return 0
    if (card == lo - 1 and lo % 13 > 0) or (card == hi + 1 and hi % 13 < 12):
        return 2
    return 0


def layoff_sequence(rest: int, table: Sequence[int]) -> list[tuple[int, int]]:
    """Lay-offs of cards of ``rest`` onto the table melds ``table`` (slot masks), repeated while
    any card fits (chains along runs), as ``(card, slot)`` in playing order.

    A card that fits a run end goes on the run (that can open further lay-offs), otherwise on a
    group; this never loses a lay-off, so the laid-off set is the largest possible.
    """
    slots = list(table)
    out: list[tuple[int, int]] = []
    changed = True
    while changed:
        changed = False
        for c in range(52):
            if not rest >> c & 1:
                continue
            target = -1
            for s, m in enumerate(slots):
                f = _fits(c, m)
                if f == 2:
                    target = s
                    break
                if f == 1 and target < 0:
                    target = s
            if target >= 0:
                slots[target] |= 1 << c
                rest &= ~(1 << c)
                out.append((c, target))
                changed = True
    return out


def _candidate_melds(hand: int) -> list[int]:
    """Templates held in ``hand`` that suffice for exact arrangements: groups and runs of 3 to 5
    cards (a longer run is two or more of these).
    """
    return [t for t, m in enumerate(_MELDS) if m & hand == m and _MELD_SIZES[t] <= 5]


def defender_plan(
    hand: int, table: Sequence[int], gin: bool, free_slots: int = E.MAX_MELD_SLOTS
) -> tuple[list[int], list[tuple[int, int]], int]:
    """The defender's melds and lay-offs that minimise its final deadwood (exact search).

    Args:
        hand: the defender's hand mask.
        table: the knocker's meld slot masks (lay-offs already made included).
        gin: the knocker went gin (no lay-offs).
        free_slots: meld slots the defender may still fill.

    Returns:
        (meld templates to declare, ``(card, slot)`` lay-offs in order, final deadwood). Ties:
        the first arrangement found in template order (fewest melds first).
    """
    cands = _candidate_melds(hand)

    def cost(used: int) -> tuple[int, list[tuple[int, int]]]:
        rest = hand & ~used
        lay = [] if gin else layoff_sequence(rest, table)
        for c, _ in lay:
            rest &= ~(1 << c)
        return value_of(rest), lay

    best_dw, best_lay = cost(0)
    best: list[int] = []

    def search(start: int, used: int, chosen: list[int]) -> None:
        nonlocal best_dw, best_lay, best
        if len(chosen) >= free_slots:
            return
        for i in range(start, len(cands)):
            m = _MELDS[cands[i]]
            if m & used:
                continue
            chosen.append(cands[i])
            dw, lay = cost(used | m)
            if dw < best_dw:
                best_dw, best_lay, best = dw, lay, list(chosen)
            search(i + 1, used | m, chosen)
            chosen.pop()

    search(0, 0, [])
    return best, best_lay, best_dw


# ---------------------------------------------------------------------------------------------
# Agents


_SMALL_BATCH = 4
"""``act_batch`` plays at most this many rows one by one (each tie drawn in Python): passing
the Generator into compiled code costs about 10 us, more than a few rows."""

_decide_compiled: Any = None
_F32 = np.dtype(np.float32)
_I8 = np.dtype(np.int8)


def _decide_entry() -> Any:
    """``decide``'s compiled code for :func:`decide_signature`, called without numba's
    dispatch (which types every argument first); the callers pass exactly those types.
    """
    global _decide_compiled
    if _decide_compiled is None:
        compile_ = getattr(decide, "compile", None)  # absent under NUMBA_DISABLE_JIT
        _decide_compiled = decide if compile_ is None else compile_(decide_signature())
    return _decide_compiled


def _int8_mask(mask: Any) -> np.ndarray | None:
    """The mask as an int8 array with the same entries, or None where int8 cannot hold them
    (the reference then decides: it reads entries as ``== 1`` and as truth values).
    """
    try:
        m = np.asarray(mask)
        if m.dtype == np.int8:
            return m
        if m.dtype == np.bool_:
            return m.view(np.int8)
        with np.errstate(invalid="ignore", over="ignore"):
            m8 = m.astype(np.int8)
        return m8 if np.array_equal(m8, m) else None
    except (TypeError, ValueError, OverflowError):
        return None


_KERNEL_KINDS: dict[type, int] = {}
_DECISION_METHODS = (
    "act_reference",
    "_auto_meld",
    "_kernel_options",
    "_draw",
    "_pick",
    "_discard_or_knock",
    "_least",
    "_knocker_meld",
    "_defender_meld",
    "_context",
)


def _kernel_kind(cls: type) -> int:
    """The compiled agent ``cls`` plays (``KIND_*``), or -1 for a subclass that overrides a
    decision method (it plays its own Python code).
    """
    kind = _KERNEL_KINDS.get(cls)
    if kind is None:
        kind = -1
        for base, k in (
            (GinRummyPlannerAgent, KIND_PLANNER),
            (GinRummySimpleAgent, KIND_SIMPLE),
            (GinRummyNoviceAgent, KIND_NOVICE),
        ):
            if issubclass(cls, base):
                same = all(
                    getattr(cls, f, None) is getattr(base, f, None) for f in _DECISION_METHODS
                )
                kind = k if same else -1
                break
        _KERNEL_KINDS[cls] = kind
    return kind


class _GinRuleAgent(SeededGenerator):
    """Shared machinery: reading the observation, knocking, discarding, manual melding."""

    name = "gin_rule"
    _policy_key: tuple[Any, ...] | None = None
    """What :meth:`compiled_policy` last answered for (class, observation size, options)."""
    _policy: Any = None

    def __init__(self, seed: int | None = None) -> None:
        self._init_rng(seed)  # self.rng: default_rng(seed), built on first use
        self._cands = np.empty(52, np.int64)  # the compiled decision's tie candidates

    # -- reading ----------------------------------------------------------------------------
    @staticmethod
    def _auto_meld(obs: np.ndarray, view: Any) -> bool:
        config = getattr(view, "config", None)
        if config is not None and hasattr(config, "auto_meld"):
            return bool(config.auto_meld)
        if obs.shape[-1] == _OBS_SIZE_AUTO:
            return True
        if obs.shape[-1] == _OBS_SIZE_MANUAL:
            return False
        raise ValueError(f"not a Gin Rummy observation: length {obs.shape[-1]}")

    def _kernel_options(self) -> tuple[int, float, float, float]:
        """``decide``'s options of this agent: (best_meld, now_weight, risk_weight,
        take_margin); read at each call, so that changed attributes take effect as in Python.
        """
        return 0, 1.0, 0.0, 0.0

    def act(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """Choose a legal action for the seat to act.

        Compiled (``rummy_agents.gin_rules_kernels.decide``), with the same moves and the same
        use of ``self.rng`` as :meth:`act_reference`, which plays the rows the compiled code
        leaves to it (input it would reject or read out of the usual layout: an empty mask, an
        observation of unknown length, mask entries that an int8 mask cannot hold).

        Args:
            observation: the PettingZoo observation dict (``"observation"``, ``"action_mask"``).
            view: the seat's :class:`rummy_agents.base.SeatView` (only ``view.config.auto_meld`` is
                read; without a view it is inferred from the observation length).

        Returns:
            An action id whose mask entry is 1.

        Raises:
            ValueError: if the mask has no legal action.
        """
        kind = _KERNEL_KINDS.get(type(self))
        if kind is None:
            kind = _kernel_kind(type(self))
        if kind >= 0:
            obs = observation["observation"]
            mask = observation["action_mask"]
            if not (type(obs) is np.ndarray and obs.dtype is _F32):
                try:
                    obs = np.asarray(obs, dtype=np.float32)
                except (TypeError, ValueError):
                    obs = None
            if not (type(mask) is np.ndarray and mask.dtype is _I8):
                mask = _int8_mask(mask)
            if obs is not None and mask is not None and obs.ndim == 1 and mask.ndim == 1:
                try:
                    auto = self._auto_meld(obs, view)
                except Exception:  # noqa: BLE001 - the reference raises it where it would
                    auto = None
                if auto is not None and obs.shape[0] >= _KERNEL_OBS_SIZE[auto]:
                    a = self._decide(obs, mask, kind, auto)
                    if a != FALLBACK:
                        return a
        return self.act_reference(observation, view)

    def _decide(self, obs: np.ndarray, mask: np.ndarray, kind: int, auto: bool) -> int:
        """One compiled decision of a 1-D float32 row and int8 mask (``FALLBACK`` for the
        reference); a tie is drawn here, as ``self.rng.integers(n)``.
        """
        if not obs.flags.c_contiguous:
            obs = np.ascontiguousarray(obs)
        if not mask.flags.c_contiguous:
            mask = np.ascontiguousarray(mask)
        best_meld, now_w, risk_w, margin = self._kernel_options()
        try:
            cands = self._cands
        except AttributeError:  # an agent unpickled from before the compiled code
            cands = self._cands = np.empty(52, np.int64)
        a, n = _decide_entry()(obs, mask, kind, best_meld, now_w, risk_w, margin, auto, cands)
        if n:
            a += int(cands[int(self.rng.integers(n))])
        return a

    def act_reference(self, observation: Mapping[str, Any], view: Any = None) -> int:
        """The Python implementation of :meth:`act`: the readable reference of the rules,
        which the compiled code reproduces move for move (``tests/test_gin_rules_compiled.py``).
        """
        obs = np.asarray(observation["observation"], dtype=np.float32)
        mask = np.asarray(observation["action_mask"])
        legal = legal_actions(mask)
        if legal.size == 1:
            return int(legal[0])
        auto = self._auto_meld(obs, view)
        pieces = read_observation(obs, auto)
        self._pieces = pieces  # for subclasses that read more than the hand
        phase = int(np.argmax(pieces["phase"]))
        hand = mask_of(pieces["hand"])
        if phase in (E.PH_UPCARD, E.PH_DRAW):
            top = int(np.argmax(pieces["discard_top"]))
            return self._draw(hand, top, mask)
        if phase == E.PH_FIFTY_OFFER:
            # the offer is only made when a knock is possible with the card: take it to knock
            return E.TAKE_DISCARD if mask[E.TAKE_DISCARD] else E.PASS
        if phase in (E.PH_DISCARD, E.PH_FIFTY_KNOCK):
            return self._discard_or_knock(hand, mask)
        if phase == E.PH_KNOCKER_MELD:
            return self._knocker_meld(hand, mask)
        if phase == E.PH_DEFENDER_MELD:
            return self._defender_meld(hand, pieces, mask)
        return int(legal[0])  # not reached: no decision in the hand_over phase

    def act_batch(
        self, observations: np.ndarray, masks: np.ndarray, auto_meld: bool | None = None
    ) -> np.ndarray:
        """One action per row, for the vector env (``rummy_env.make_vec``); the agents are
        stateless, so one agent can play every game and seat.

        Compiled (``rummy_agents.gin_rules_kernels.act_rows``): the rows are played in order,
        each tie drawn from ``self.rng``, so the actions and the generator's state afterwards
        are those of :meth:`act_batch_reference` (a loop over :meth:`act_reference`), which
        also plays any row the compiled code leaves to it.

        Args:
            observations: (N, obs_size) observations of the players to act.
            masks: (N, A) action masks.
            auto_meld: the env's ``auto_meld`` option (``None``: from the observation length).

        Returns:
            (N,) int64 legal action ids.

        Raises:
            ValueError: if a mask has no legal action (the rows before it are played).
        """
        obs = np.asarray(observations)
        if auto_meld is None:
            auto_meld = self._auto_meld(obs, None)
        kind = _kernel_kind(type(self))
        m = None
        if kind >= 0:
            try:
                auto = bool(auto_meld)
                raw = np.asarray(masks)
                m = _int8_mask(raw)
                obs32 = obs if obs.dtype == np.float32 else obs.astype(np.float32)
            except (TypeError, ValueError):
                m = None  # the reference meets the same input (and raises where it did)
        if (
            m is None
            or obs.ndim != 2
            or m.ndim != 2
            or obs.shape[0] != m.shape[0]
            or obs.shape[1] < _KERNEL_OBS_SIZE[auto]
        ):
            return self.act_batch_reference(obs, masks, auto_meld)
        n = obs.shape[0]
        out = np.empty(n, np.int64)
        if n <= _SMALL_BATCH:  # below this, unboxing the Generator costs more than the rows
            for i in range(n):
                out[i] = self._decide(obs32[i], m[i], kind, auto)
                if out[i] == FALLBACK:
                    out[i] = self._act_row_reference(obs, raw, i, auto_meld)
            return out
        obs32 = np.ascontiguousarray(obs32)
        m = np.ascontiguousarray(m)
        best_meld, now_w, risk_w, margin = self._kernel_options()
        i = 0
        while i < n:
            i = act_rows(
                obs32, m, i, kind, best_meld, now_w, risk_w, margin, int(auto), self.rng, out
            )
            if i < n:
                out[i] = self._act_row_reference(obs, raw, i, auto_meld)
                i += 1
        return out

    def compiled_policy(self, game: Any) -> Any:
        """This agent as a compiled opponent of the Gymnasium vector env: a
        :class:`rummy_agents.opponent_loop.CompiledPolicy` (the decision's options and
        ``self.rng``, from which the loop draws the ties as :meth:`act_batch` and :meth:`act`
        draw them), or ``None`` where those would not run the compiled decision (a subclass
        with its own rules, another generator, observations of another length).

        Args:
            game: the env's batched game (``obs_size`` is read).
        """
        if not self.rng_is_generator():
            return None
        # asked at every step of the vector env: the last answer is kept for the same class,
        # observation size and options (all it depends on; the options are read every call)
        key = (type(self), int(game.obs_size), self._kernel_options())
        if key == self._policy_key:
            return self._policy
        kind = _kernel_kind(type(self))
        size = key[1]
        if kind < 0 or size not in (_OBS_SIZE_AUTO, _OBS_SIZE_MANUAL):
            return None
        auto = size == _OBS_SIZE_AUTO
        if size < _KERNEL_OBS_SIZE[auto]:
            return None
        from rummy_agents import opponent_loop  # noqa: PLC0415 - numba on use

        best_meld, now_w, risk_w, margin = key[2]
        tag = opponent_loop.KIND_TAGS[kind](kind)  # the kind in the type: its rules compile alone
        policy = (tag, int(best_meld), float(now_w), float(risk_w), float(margin), int(auto))
        self._policy = opponent_loop.CompiledPolicy(
            policy, self, shared_parallel=opponent_loop.play_shared_parallel
        )
        self._policy_key = key
        return self._policy

    def _act_row_reference(self, obs: np.ndarray, masks: Any, i: int, auto_meld: Any) -> int:
        """Row ``i`` of :meth:`act_batch_reference` (the row the compiled code left to it)."""
        row = {"observation": obs[i], "action_mask": masks[i]}
        return self.act_reference(row, _ConfigView(auto_meld))

    def act_batch_reference(
        self, observations: np.ndarray, masks: np.ndarray, auto_meld: bool | None = None
    ) -> np.ndarray:
        """The Python implementation of :meth:`act_batch`: :meth:`act_reference` row by row."""
        obs = np.asarray(observations)
        if auto_meld is None:
            auto_meld = self._auto_meld(obs, None)
        view = _ConfigView(auto_meld)
        return np.array(
            [
                self.act_reference({"observation": o, "action_mask": m}, view)
                for o, m in zip(obs, masks, strict=True)
            ],
            dtype=np.int64,
        )

    # -- decisions --------------------------------------------------------------------------
    def _draw(self, hand: int, top: int, mask: np.ndarray) -> int:
        raise NotImplementedError

    def _pick(self, cands: list[int]) -> int:
        """Tie-break among candidate cards (subclasses refine)."""
        return cands[int(self.rng.integers(len(cands)))]

    def _discard_or_knock(self, hand: int, mask: np.ndarray) -> int:
        """Knock if any knock is legal (minimum deadwood, so gin when possible), else discard a
        card leaving the least deadwood.
        """
        dw = deadwood_per_discard(hand)
        knocks = np.flatnonzero(mask[E.KNOCK_BASE : E.KNOCK_BASE + 52] == 1).tolist()
        if knocks:
            return E.KNOCK_BASE + self._pick(self._least(knocks, dw))
        discards = np.flatnonzero(mask[E.DISCARD_BASE : E.DISCARD_BASE + 52] == 1).tolist()
        return E.DISCARD_BASE + self._pick(self._least(discards, dw))

    @staticmethod
    def _least(cards: list[int], dw: np.ndarray) -> list[int]:
        best = min(int(dw[c]) for c in cards)
        return [c for c in cards if int(dw[c]) == best]

    def _knocker_meld(self, hand: int, mask: np.ndarray) -> int:
        """Declare the melds of a minimum-deadwood arrangement, then END_MELDING."""
        for t in knocker_meld_plan(hand):
            if mask[E.MELD_BASE + t]:
                return E.MELD_BASE + t
        if mask[E.END_MELDING]:
            return E.END_MELDING
        legal = np.flatnonzero(mask == 1)
        return int(legal[0])  # not reached: the plan always stays within the limit

    def _defender_meld(self, hand: int, pieces: dict[str, np.ndarray], mask: np.ndarray) -> int:
        """Meld and lay off to minimise the final deadwood, then END_MELDING."""
        melds = pieces["melds"]
        table = [mask_of(melds[1, s]) for s in range(E.MAX_MELD_SLOTS)]
        own = sum(1 for s in range(E.MAX_MELD_SLOTS) if melds[0, s].any())
        # after the knocker's declaration its hand holds only its deadwood: empty means gin
        gin = not pieces["opponent_hand_size"][0] > 0
        plan, lay, _ = defender_plan(hand, table, gin, E.MAX_MELD_SLOTS - own)
        for t in sorted(plan, key=lambda t: -_MELD_SIZES[t]):
            if mask[E.MELD_BASE + t]:
                return E.MELD_BASE + t
        for c, s in lay:
            a = E.LAYOFF_BASE + E.MAX_MELD_SLOTS * c + s
            if mask[a]:
                return a
        return E.END_MELDING


class _ConfigView:
    """Minimal stand-in for a SeatView when only the rule options are known."""

    def __init__(self, auto_meld: bool) -> None:
        self.config = type("Cfg", (), {"auto_meld": auto_meld})()


class GinRummySimpleAgent(_GinRuleAgent):
    """The EAAI Gin Rummy challenge's "simple player" (Neller's ``SimpleGinRummyPlayer``).

    The original (Todd W. Neller, EAAI-21 Gin Rummy challenge, Java; read, not copied) "ignores
    opponent actions and cards no longer in play, draws the face-up card only if it becomes part
    of a meld, discards a highest-ranking unmelded card, knocks as early as possible". Its exact
    rules, and how this agent plays them in our action model:

    1. **Draw** (upcard offer and every later draw): take the top discard iff the card "would be
       part of a meld" together with the hand - Neller tests *any* meld of hand + card
       (``cardsToAllMelds``), which is ``take_rule="any_meld"`` (default, :func:`completes_meld`).
       ``take_rule="best_meld"`` takes it only if some minimum-deadwood arrangement of hand +
       card melds it (:func:`in_best_meld`). Otherwise pass the offer / draw from the stock.
    2. **Discard**: among the legal discards (never the card just taken from the pile - the mask
       forbids it, and Neller skips it too), keep those leaving the least deadwood (exact);
       among them the highest value, then the highest rank (``SimpleGinRummyPlayer2``: highest
       rank; the first version picked uniformly at random); the last tie (equal ranks: suits)
       is broken by the agent's seeded generator.
    3. **Knock as soon as possible**: whenever a KNOCK is legal, knock; the face-down discard is
       chosen like a discard (least deadwood - so gin whenever gin is possible - then highest
       value, rank, seeded suit). Under Oklahoma the mask applies the hand's knock limit.
    4. **Fiftieth card** (``fiftieth_card_action``): the offer only comes when a knock is
       possible with that card, so take it and knock.
    5. **Manual melds** (``auto_meld=False``): as knocker declare a minimum-deadwood arrangement
       (longest meld first, :func:`knocker_meld_plan`), then END_MELDING; as defender declare
       melds and lay off every card possible so that the final deadwood is minimal
       (:func:`defender_plan`), then END_MELDING. (Neller's framework lays off automatically.)

    Departures from the original: Neller's player also refuses to repeat a (drawn card,
    discarded card) pair within a hand, a guard against draw/discard cycles in his framework; this
    agent is stateless (it acts from the observation alone) and omits it, so the arena caps the
    number of decisions per game instead. The original knocks with a random best meld set;
    here the env arranges (``auto_meld``) or the longest-first plan is declared.

    Args:
        seed: seed of the generator used for the last tie-break (equal ranks).
        take_rule: ``"any_meld"`` (Neller) or ``"best_meld"``.
    """

    name = "simple"

    def __init__(self, seed: int | None = None, take_rule: str = "any_meld") -> None:
        super().__init__(seed)
        if take_rule not in TAKE_RULES:
            raise ValueError(f"take_rule must be one of {TAKE_RULES}, got {take_rule!r}")
        self.take_rule = take_rule

    def _kernel_options(self) -> tuple[int, float, float, float]:
        return int(self.take_rule != "any_meld"), 1.0, 0.0, 0.0

    def _draw(self, hand: int, top: int, mask: np.ndarray) -> int:
        if mask[E.TAKE_DISCARD]:
            test = completes_meld if self.take_rule == "any_meld" else in_best_meld
            if test(top, hand):
                return E.TAKE_DISCARD
        return E.DRAW_STOCK if mask[E.DRAW_STOCK] else E.PASS

    def _pick(self, cands: list[int]) -> int:
        if len(cands) > 1:
            top = max((_VALUES[c], c % 13) for c in cands)
            cands = [c for c in cands if (_VALUES[c], c % 13) == top]
        return super()._pick(cands)


class GinRummyPlannerAgent(GinRummySimpleAgent):
    """The simple player with a one-draw lookahead and card tracking.

    It still knocks as soon as possible (with the least deadwood, so gin when possible) and melds
    like :class:`GinRummySimpleAgent`; what changes is the draw and the discard, both judged from
    what the seat has seen (its hand, the discard pile, the cards the opponent is known to hold):

    1. **Unseen cards** are the 52 less the hand, the pile and the opponent's known cards; each is
       taken as equally likely to be the next stock card, and each is in the opponent's hand with
       probability ``q`` = (opponent's unknown cards) / (unseen cards).
    2. **Draw**: the outlook of drawing from the stock is the mean, over the unseen cards, of the
       best deadwood after the following discard. The top discard is taken when it completes a
       meld (the simple rule) or when the best deadwood after taking it is below that outlook by
       more than ``take_margin``.
    3. **Discard**: each legal discard ``d`` is scored ``now_weight * deadwood(hand - d) +
       outlook(hand - d) + risk_weight * risk(d)`` and the lowest score is discarded (ties as
       the simple player: highest value, then rank). The outlook rewards keeping cards that can
       become melds; ``risk(d)`` is the chance that ``d`` completes a three-card meld in the
       opponent's hand (both other cards known there, or unseen with probability ``q``).

    Args:
        seed: seed of the generator used for the last tie-break.
        risk_weight: deadwood points charged per unit of feed risk.
        now_weight: weight of the deadwood right after the discard.
        take_margin: deadwood points the top discard must gain over the stock outlook.
    """

    name = "planner"

    def __init__(
        self,
        seed: int | None = None,
        risk_weight: float = 0.0,
        now_weight: float = 1.0,
        take_margin: float = float("inf"),
    ) -> None:
        super().__init__(seed)
        self.risk_weight = float(risk_weight)
        self.now_weight = float(now_weight)
        self.take_margin = float(take_margin)

    def _kernel_options(self) -> tuple[int, float, float, float]:
        return 0, float(self.now_weight), float(self.risk_weight), float(self.take_margin)

    def _context(self, hand: int) -> tuple[int, int, float, int]:
        p = self._pieces
        pile = mask_of(p["discard_pile"])
        known = mask_of(p["opponent_known"])
        unseen = ((1 << 52) - 1) & ~hand & ~pile & ~known
        n_unseen = bin(unseen).count("1")
        opp_unknown = round(float(p["opponent_hand_size"][0]) * 11) - bin(known).count("1")
        q = max(opp_unknown, 0) / n_unseen if n_unseen else 0.0
        limit = round(float(p["knock_limit"][0]) * 10)
        return unseen, known, q, limit

    def _draw(self, hand: int, top: int, mask: np.ndarray) -> int:
        stock = E.DRAW_STOCK if mask[E.DRAW_STOCK] else E.PASS
        if not mask[E.TAKE_DISCARD]:
            return stock
        if completes_meld(top, hand):
            return E.TAKE_DISCARD
        unseen, _, _, limit = self._context(hand)
        dw = deadwood_per_discard(hand | 1 << top)
        dw[top] = INF_DEADWOOD  # the card just taken may not be discarded
        outlook, _ = _draw_outlook(
            np.uint64(hand), np.uint64(unseen), limit, SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD
        )
        return E.TAKE_DISCARD if int(dw.min()) < outlook - self.take_margin else stock

    def _discard_or_knock(self, hand: int, mask: np.ndarray) -> int:
        if mask[E.KNOCK_BASE : E.KNOCK_BASE + 52].any():
            return super()._discard_or_knock(hand, mask)
        # no knock: the discard phase (the fiftieth-card knock phase only offers knocks)
        cands = np.flatnonzero(mask[E.DISCARD_BASE : E.DISCARD_BASE + 52] == 1)
        unseen, known, q, limit = self._context(hand)
        n = cands.size
        now, after, risk = (np.empty(n, np.float64) for _ in range(3))
        _plan_discards(
            np.uint64(hand), cands.astype(np.int64), np.uint64(unseen), np.uint64(known), q,
            limit, _MELD3, SUIT_DEADWOOD, GROUP_OPTS, GROUP_NOPT, SPREAD, now, after, risk,
        )  # fmt: skip
        score = self.now_weight * now + after + self.risk_weight * risk
        best = score.min()
        ties = [int(c) for c, s in zip(cands, score, strict=True) if s <= best + 1e-9]
        return E.DISCARD_BASE + self._pick(ties)


class GinRummyNoviceAgent(_GinRuleAgent):
    """A novice: knocks as soon as possible, otherwise discards to minimise deadwood, and draws at
    random.

    Rules: the upcard offer is taken or passed with probability 1/2 each; a normal draw takes the
    top discard or the stock with probability 1/2 each when both are legal (otherwise the legal
    one); the fiftieth-card offer is always taken (it is only offered when a knock is possible);
    whenever a KNOCK is legal it knocks with a discard leaving the least deadwood; otherwise it
    discards a card leaving the least deadwood. Every tie is broken uniformly at random by the
    agent's seeded generator. With manual melds it declares and lays off like
    :class:`GinRummySimpleAgent`.

    Args:
        seed: seed of the agent's generator.
    """

    name = "novice"

    def _draw(self, hand: int, top: int, mask: np.ndarray) -> int:
        opts = [a for a in (E.DRAW_STOCK, E.TAKE_DISCARD, E.PASS) if mask[a]]
        return opts[int(self.rng.integers(len(opts)))]


__all__ = [
    "INF_DEADWOOD",
    "TAKE_RULES",
    "GinRummyNoviceAgent",
    "GinRummyPlannerAgent",
    "GinRummySimpleAgent",
    "cards_of",
    "completes_meld",
    "deadwood_per_discard",
    "defender_plan",
    "hand_deadwood",
    "in_best_meld",
    "knocker_meld_plan",
    "layoff_sequence",
    "mask_of",
    "read_observation",
    "value_of",
]
