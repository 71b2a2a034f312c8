"""The batch layer, written once for every game: the compiled entry points that reset, step and
play N games of one variant, over the hooks each game implements for its state record.

A game is a record layout (``record_dtype``: the common fields below plus its own), a config
vector (``to_array`` of its config dataclass), an observation encoding, and these hooks, each an
``@njit`` function of its kernels module under the hook's name and with these parameters:

======================================================  ==========================================
hook                                                    what it does
======================================================  ==========================================
``new_work(states, cfg)``                               scratch the other hooks share (one per
                                                        thread; any numba value)
``reset_episode(rec, cfg, tables, dealer, shuffle)``    start an episode (dealer -1: random;
                                                        ``shuffle`` False keeps a stacked deck)
``apply_action(rec, cfg, tables, a, mask, work)``       apply a legal action; ``mask`` (the
                                                        game's mask row) is free scratch: it is
                                                        recomputed right after. Returns True
                                                        when it left the rest of the
                                                        transition to ``settle``, else False
``settle(rec, cfg, tables, work)``                      (optional) finish the transition that
                                                        ``apply_action`` left pending
``legal_mask(rec, cfg, tables, out, work)``             the exact legal-action mask into ``out``
``write_obs(rec, cfg, p, out)``                         player ``p``'s observation into ``out``
``num_actions(rec, cfg)``                               size of the action space
``final_points(rec, cfg, q)``                           player ``q``'s points of the finished
                                                        episode (its score or penalty)
``write_final_extra(rec, cfg, out)``                    the game's own finished-episode integers
                                                        (``BatchedGame.final_fields`` after the
                                                        points, outcome and length)
``world_ok(rec, cfg, mask)``                            (only games whose worlds ``deal_worlds``
                                                        deals) does a dealt world's mask give the
                                                        player to act a move
======================================================  ==========================================

The kernels module ends with ``batch.register(<its record's field names>, globals())``.

Why ``settle``: a compiled function is compiled with everything it may call, so the AEC env's
first ``step`` would compile a game's rarest and costliest transitions (Gin's automatic
lay-out and scoring of a knock: a third of its kernels) before the first card is drawn. A game
may leave such a transition pending (``apply_action`` returns True) and do it in ``settle``.
The batch entry points call ``settle`` at once; the AEC path (``step_single``) returns to
Python first, which calls ``settle_single``, compiled the first time a hand ends that way.

Why overloads: numba's disk cache cannot hold a function passed as an argument, so the hooks
here are pure-Python stubs, and ``register`` gives each a ``numba.extending.overload`` that
answers for the game's records only (told by their field names, since 500 Rum and Rummy 51 size
theirs by the config). An entry point then compiles once per record layout and is cached like
any kernel; the overloads are inlined (``HOOK_OPTIONS``), so a hook costs what a direct call
did. A game's kernels module must be imported before an entry point first compiles for its
records (each ``rules/<game>/game.py`` imports it). numba does not see that a cached entry point
depends on hooks in other files: ``rummy_env.core.jitcache`` drops the package's caches whenever
a kernel source changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from numba import prange, types
from numba.extending import overload

from rummy_env.core import compile_notice
from rummy_env.core import rng as _rng
from rummy_env.core.jit import kernel
from rummy_env.core.worlds import deal_hidden, rewrite_dealt

PAR_CHUNKS = 64
"""The parallel kernels hand games to threads in this many chunks, one work buffer each."""

HOOK_OPTIONS: dict[str, Any] = {"jit_options": {"cache": True}, "inline": "always"}
"""Options of every hook overload (``overload(batch.hook, **HOOK_OPTIONS)``)."""


def record_dtype(num_players: int, fields: Sequence[tuple[Any, ...] | str]) -> np.dtype:
    """An aligned record layout from ``fields``: numpy field tuples, and the names of the
    common fields every game record has (declared here once, placed where the game lists them).

    Common fields: ``phase`` (int8, the game's phase id), ``cur`` (int8, player to act),
    ``dealer`` (int8), ``outcome`` (int8, how the last hand ended, 0 before), ``done`` and
    ``truncated`` (int8, episode over / cut by ``max_steps``), ``rewards`` (float32 per player,
    of the last step), ``steps`` (int32, decisions this episode), ``hands_played`` (int32) and
    ``rng`` (uint64, the game's SplitMix64 stream, ``core.rng``).
    """
    common = {
        "phase": ("phase", np.int8),
        "cur": ("cur", np.int8),
        "dealer": ("dealer", np.int8),
        "outcome": ("outcome", np.int8),
        "done": ("done", np.int8),
        "truncated": ("truncated", np.int8),
        "rewards": ("rewards", np.float32, (num_players,)),
        "steps": ("steps", np.int32),
        "hands_played": ("hands_played", np.int32),
        "rng": ("rng", np.uint64),
    }
    named = [f for f in fields if isinstance(f, str)]
    if sorted(named) != sorted(common):
        raise ValueError(f"a record lists each common field once: {sorted(common)}, got {named}")
    return np.dtype([common[f] if isinstance(f, str) else f for f in fields], align=True)


def for_records(names: Sequence[str]) -> Callable[[types.Type], bool]:
    """A test of numba types for a game's hook overloads: True for a record (or an array of
    records) whose fields are ``names``, in order (a game's records of every size).
    """
    names = tuple(names)

    def accepts(t: types.Type) -> bool:
        if isinstance(t, types.Array):
            t = t.dtype
        return isinstance(t, types.Record) and tuple(t.fields) == names

    return accepts


@kernel
def begin_episode(rec, dealer):
    """Clear the common fields for a new episode and seat the dealer (-1: drawn from the
    record's stream); a game's ``reset_episode`` calls it before its deal.
    """
    p_n = rec.rewards.shape[0]
    for q in range(p_n):
        rec.rewards[q] = 0.0
    rec.outcome = 0
    rec.steps = 0
    rec.hands_played = 0
    rec.done = 0
    rec.truncated = 0
    rec.dealer = _rng.randint(rec, p_n) if dealer < 0 else dealer


@kernel(counted=False)
def truncate(rec, max_steps):
    """End the episode as truncated (rewards of the step zeroed) once it has reached
    ``max_steps`` decisions (0: no limit); a game's ``apply_action`` calls it last.
    """
    if rec.done == 0 and max_steps > 0 and rec.steps >= max_steps:
        rec.truncated = 1
        rec.done = 1
        for q in range(rec.rewards.shape[0]):
            rec.rewards[q] = 0.0


# -- hooks: stubs that each game overloads for its records (``register``) --------------------


def new_work(states, cfg):
    """Scratch shared by the other hooks (see the module docstring)."""
    raise NotImplementedError


def reset_episode(rec, cfg, tables, dealer, shuffle):
    """Start an episode (see the module docstring)."""
    raise NotImplementedError


def apply_action(rec, cfg, tables, a, mask, work):
    """Apply a legal action (see the module docstring)."""
    raise NotImplementedError


def legal_mask(rec, cfg, tables, out, work):
    """Write the legal-action mask (see the module docstring)."""
    raise NotImplementedError


def settle(rec, cfg, tables, work):
    """Finish a transition ``apply_action`` left pending (see the module docstring)."""
    raise NotImplementedError


def write_obs(rec, cfg, p, out):
    """Write player ``p``'s observation (see the module docstring)."""
    raise NotImplementedError


def num_actions(rec, cfg):
    """Size of the action space (see the module docstring)."""
    raise NotImplementedError


def final_points(rec, cfg, q):
    """Player ``q``'s points of the finished episode (see the module docstring)."""
    raise NotImplementedError


def write_final_extra(rec, cfg, out):
    """The game's own finished-episode integers (see the module docstring)."""
    raise NotImplementedError


def world_ok(rec, cfg, mask):
    """Does a dealt world give the player to act a move (see the module docstring)."""
    raise NotImplementedError


# One typing function per hook, with the hook's parameters: numba checks that an overload's
# typing function and implementation take the same parameters, and cannot inline ``*args``.
def _new_work(ok, impl):
    def typer(states, cfg):
        if ok(states):
            return lambda states, cfg: impl(states, cfg)

    return typer


def _reset_episode(ok, impl):
    def typer(rec, cfg, tables, dealer, shuffle):
        if ok(rec):
            return lambda rec, cfg, tables, dealer, shuffle: impl(rec, cfg, tables, dealer, shuffle)

    return typer


def _apply_action(ok, impl):
    def typer(rec, cfg, tables, a, mask, work):
        if ok(rec):
            return lambda rec, cfg, tables, a, mask, work: impl(rec, cfg, tables, a, mask, work)

    return typer


def _settle(ok, impl):
    def typer(rec, cfg, tables, work):
        if ok(rec):
            return lambda rec, cfg, tables, work: impl(rec, cfg, tables, work)

    return typer


def _legal_mask(ok, impl):
    def typer(rec, cfg, tables, out, work):
        if ok(rec):
            return lambda rec, cfg, tables, out, work: impl(rec, cfg, tables, out, work)

    return typer


def _write_obs(ok, impl):
    def typer(rec, cfg, p, out):
        if ok(rec):
            return lambda rec, cfg, p, out: impl(rec, cfg, p, out)

    return typer


def _num_actions(ok, impl):
    def typer(rec, cfg):
        if ok(rec):
            return lambda rec, cfg: impl(rec, cfg)

    return typer


def _final_points(ok, impl):
    def typer(rec, cfg, q):
        if ok(rec):
            return lambda rec, cfg, q: impl(rec, cfg, q)

    return typer


def _write_final_extra(ok, impl):
    def typer(rec, cfg, out):
        if ok(rec):
            return lambda rec, cfg, out: impl(rec, cfg, out)

    return typer


def _world_ok(ok, impl):
    def typer(rec, cfg, mask):
        if ok(rec):
            return lambda rec, cfg, mask: impl(rec, cfg, mask)

    return typer


HOOKS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "new_work": (new_work, _new_work),
    "reset_episode": (reset_episode, _reset_episode),
    "apply_action": (apply_action, _apply_action),
    "legal_mask": (legal_mask, _legal_mask),
    "settle": (settle, _settle),
    "write_obs": (write_obs, _write_obs),
    "num_actions": (num_actions, _num_actions),
    "final_points": (final_points, _final_points),
    "write_final_extra": (write_final_extra, _write_final_extra),
    "world_ok": (world_ok, _world_ok),
}
OPTIONAL_HOOKS = ("world_ok", "settle")


def register(record_fields: Sequence[str] | None, kernels: Mapping[str, Any]) -> None:
    """Make a game's compiled functions its hooks: ``kernels`` (the game's kernels module
    namespace, ``globals()``) holds one ``@njit`` function per hook, under the hook's name and
    with its parameters; they serve the records whose fields are ``record_fields`` (the
    record dtype's ``names``, which numpy types as ``None`` for a dtype without fields).

    Raises:
        ValueError: if ``record_fields`` is ``None`` or ``kernels`` lacks a hook (``world_ok``
            is needed only by games whose worlds ``deal_worlds`` deals; without ``settle``, one
            that does nothing).
    """
    if record_fields is None:
        raise ValueError("record_fields must be the record dtype's field names, got None")
    missing = [n for n in HOOKS if n not in kernels and n not in OPTIONAL_HOOKS]
    if missing:
        raise ValueError(f"{kernels.get('__name__')} defines no hook {', '.join(missing)}")
    ok = for_records(record_fields)
    module = str(kernels.get("__name__", "")).split(".")
    if module[:2] == ["rummy_env", "rules"] and len(module) > 2:
        compile_notice.RECORD_GAMES[tuple(record_fields)] = module[2]
    for name, (stub, typer) in HOOKS.items():
        if name in kernels:
            overload(stub, **HOOK_OPTIONS)(typer(ok, kernels[name]))
    if "settle" not in kernels:
        overload(settle, **HOOK_OPTIONS)(_settle(ok, _nothing_to_settle))


@kernel
def _nothing_to_settle(rec, cfg, tables, work):
    """The ``settle`` of games whose ``apply_action`` always finishes its transition."""


# -- entry points ---------------------------------------------------------------------------


@kernel
def reset_batch(states, cfg, tables, dealers, stacked, masks, obs, write):
    """Reset every game (dealer -1: random; ``stacked`` keeps the deck already placed)."""
    work = new_work(states, cfg)
    for i in range(states.shape[0]):
        rec = states[i]
        reset_episode(rec, cfg, tables, dealers[i], not stacked[i])
        legal_mask(rec, cfg, tables, masks[i], work)
        if write:
            write_obs(rec, cfg, rec.cur, obs[i])


@kernel
def _step_range(states, lo, hi, cfg, tables, actions, masks, obs, rewards, term, trunc,
                final_obs, final_info, autoreset, write, work):  # fmt: skip
    """Step games ``lo .. hi - 1``. One call per range, not per game: each array passed to a
    compiled function costs a reference count increment and decrement per call.
    """
    for i in range(lo, hi):
        rec = states[i]
        if apply_action(rec, cfg, tables, actions[i], masks[i], work):
            settle(rec, cfg, tables, work)
        p_n = rec.rewards.shape[0]
        for q in range(p_n):
            rewards[i, q] = rec.rewards[q]
        term[i] = rec.done != 0 and rec.truncated == 0
        trunc[i] = rec.truncated != 0
        if rec.done and autoreset:
            row = final_info[i]
            for q in range(p_n):
                write_obs(rec, cfg, q, final_obs[i, q])
                row[q] = final_points(rec, cfg, q)
            row[p_n] = rec.outcome
            row[p_n + 1] = rec.steps
            write_final_extra(rec, cfg, row[p_n + 2 :])
            reset_episode(rec, cfg, tables, -1, True)
        legal_mask(rec, cfg, tables, masks[i], work)
        if write:
            write_obs(rec, cfg, rec.cur, obs[i])


# Serial and parallel entry points are distinct functions: numba's disk cache is keyed by the
# function, so two dispatchers built from one function would load each other's machine code.
@kernel
def step_batch(states, cfg, tables, actions, masks, obs, rewards, term, trunc, final_obs,
               final_info, autoreset, write):  # fmt: skip
    """Step every game (serial). ``final_obs`` / ``final_info`` receive the finished episodes
    of the games that ``autoreset`` starts anew in the same call.
    """
    work = new_work(states, cfg)
    _step_range(states, 0, states.shape[0], cfg, tables, actions, masks, obs, rewards, term,
                trunc, final_obs, final_info, autoreset, write, work)  # fmt: skip


@kernel(parallel=True)
def step_batch_parallel(states, cfg, tables, actions, masks, obs, rewards, term, trunc,
                        final_obs, final_info, autoreset, write):  # fmt: skip
    """Step every game (threads over ``PAR_CHUNKS`` chunks of games, one work buffer each)."""
    n = states.shape[0]
    n_ch = min(n, PAR_CHUNKS)
    for ch in prange(n_ch):
        work = new_work(states, cfg)
        _step_range(states, ch * n // n_ch, (ch + 1) * n // n_ch, cfg, tables, actions, masks,
                    obs, rewards, term, trunc, final_obs, final_info, autoreset, write,
                    work)  # fmt: skip


@kernel
def step_single(states, cfg, tables, i, a, masks):
    """The AEC env's step: apply ``a`` in game ``i`` and refresh its mask (no output arrays).

    Returns (pending, done, truncated, player to act, hands played); the rewards are in the
    record. ``pending``: the game left the transition to ``settle``, which ``settle_single``
    does (the rest of the tuple and the mask are then stale). Kept apart so that a first step
    does not compile what only the end of a hand needs.
    """
    rec = states[i]
    work = new_work(states, cfg)
    if apply_action(rec, cfg, tables, a, masks[i], work):
        return True, False, False, rec.cur, rec.hands_played
    legal_mask(rec, cfg, tables, masks[i], work)
    return False, rec.done != 0, rec.truncated != 0, rec.cur, rec.hands_played


@kernel
def settle_single(states, cfg, tables, i, masks):
    """Finish the transition ``step_single`` left pending in game ``i`` and refresh its mask.
    Returns (done, truncated, player to act, hands played).
    """
    rec = states[i]
    work = new_work(states, cfg)
    settle(rec, cfg, tables, work)
    legal_mask(rec, cfg, tables, masks[i], work)
    return rec.done != 0, rec.truncated != 0, rec.cur, rec.hands_played


@kernel
def refresh_masks(states, cfg, tables, masks):
    """Recompute every game's legal-action mask from its state."""
    work = new_work(states, cfg)
    for i in range(states.shape[0]):
        legal_mask(states[i], cfg, tables, masks[i], work)


@kernel
def write_obs_at(states, cfg, i, p, out):
    """``write_obs`` for game ``i`` of a batch (records are not passed from Python: typing a
    ``np.void`` argument is slow).
    """
    write_obs(states[i], cfg, p, out)


@kernel
def _play_random_range(states, lo, hi, cfg, tables, episodes, ep_outcome, ep_len, ep_points,
                       ep_hands, work):  # fmt: skip
    """Play ``episodes`` episodes in games ``lo .. hi - 1`` with uniformly random legal actions
    drawn from each game's own stream.
    """
    for i in range(lo, hi):
        rec = states[i]
        na = num_actions(rec, cfg)
        mask = np.zeros(na, np.int8)
        for e in range(episodes):
            reset_episode(rec, cfg, tables, -1, True)
            while not rec.done:
                legal_mask(rec, cfg, tables, mask, work)
                if apply_action(rec, cfg, tables, _rng.random_legal(rec, mask, na), mask, work):
                    settle(rec, cfg, tables, work)
            ep_outcome[i, e] = rec.outcome
            ep_len[i, e] = rec.steps
            ep_hands[i, e] = rec.hands_played
            for q in range(rec.rewards.shape[0]):
                ep_points[i, e, q] = final_points(rec, cfg, q)


@kernel
def play_random(states, cfg, tables, episodes, ep_outcome, ep_len, ep_points, ep_hands):
    """Random full episodes in every game (serial): per game and episode the outcome of the
    last hand, the decisions, each player's ``final_points`` and the hands played.
    """
    work = new_work(states, cfg)
    _play_random_range(states, 0, states.shape[0], cfg, tables, episodes, ep_outcome, ep_len,
                       ep_points, ep_hands, work)  # fmt: skip


@kernel(parallel=True)
def play_random_parallel(states, cfg, tables, episodes, ep_outcome, ep_len, ep_points, ep_hands):
    """Random full episodes in every game (threads over games); see ``play_random``."""
    for i in prange(states.shape[0]):
        work = new_work(states, cfg)
        _play_random_range(states, i, i + 1, cfg, tables, episodes, ep_outcome, ep_len,
                           ep_points, ep_hands, work)  # fmt: skip


@kernel
def deal_worlds(states, cfg, tables, base, hidden_n, pool, counts, max_tries, check):
    """Deal the hidden cards of every world anew (``JokerWorldsMixin.sample_worlds``).

    Each record already holds the state to sample from. Hand ``q`` becomes ``base[q]`` plus
    ``hidden_n[q]`` cards of a shuffle of ``pool``, the rest is the stock, and the cards
    already dealt are rewritten (``core.worlds``; ``counts``: copies of each card type in the
    deck). With ``check``, a deal is redrawn (up to ``max_tries`` times) until ``world_ok``.
    Returns the deals tried per world, -1 where none passed.
    """
    n_pool = pool.shape[0]
    buf = pool.copy()
    n = states.shape[0]
    tries = np.full(n, -1, np.int64)
    if n == 0:
        return tries
    p_n = states[0].rewards.shape[0]
    mask = np.empty(num_actions(states[0], cfg), np.int8)
    work = new_work(states, cfg)
    scratch = np.empty(counts.shape[0], np.int64)
    for w in range(n):
        rec = states[w]
        for t in range(max_tries):
            deal_hidden(rec, base, hidden_n, buf, n_pool, p_n)
            if check:
                legal_mask(rec, cfg, tables, mask, work)
                if not world_ok(rec, cfg, mask):
                    continue
            tries[w] = t + 1
            break
        rewrite_dealt(rec, counts, scratch)
    return tries
