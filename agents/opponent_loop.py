"""The Gymnasium vector env's opponents, compiled: one call applies the learner's actions and
plays the rule opponents up to every game's next learner decision.

:class:`rummy_env.wrappers.RummySingleAgentVectorEnv` steps N games of one learner seat against
opponents. With Python opponents each round of opponent moves is a compiled step of the games
that need one plus an agent call; the loop here does it all in one call of :func:`play_shared`,
over the game's hooks (``rummy_env.core.batch``) and the agent's compiled decision, doing to
each game exactly what the env's Python loop does:

- the learner's actions are applied in every game (``learner``), then rounds of opponent moves:
  each round takes the games whose player to act is not the learner, in game order, decides all
  their moves (ties drawn from the agent's generator, row after row, as ``act_batch`` draws
  them), then applies them; until the learner is to act everywhere;
- every move is :func:`rummy_env.core.learner.advance_game` (the env's bookkeeping: learner
  rewards, the end of its episode, the new deal and learner seat, mask and observation);
- a row the compiled decision leaves to the Python reference (malformed observations, which the
  env never writes) or an illegal decision returns to the env, which finishes that round in
  Python (``act_batch`` decides the rest of the round's rows, in order) and calls again.

Two loops, for the env's two ways of seating agents:

- :func:`play_shared`: one agent plays every game (an agent with ``act_batch``: the env's
  ``BATCH`` opponents, Gin Rummy's ``simple``, ``novice``, ``planner``), its ties drawn from its
  one generator in the order its ``act_batch`` would draw them, round after round;
- :func:`play_per_game`: a factory builds a fresh agent for each seat of each game at the start
  of every episode, seeded ``default_rng(s + k)`` from the game's stream (the env's ``SEAT``
  opponents: the joker games' ``greedy``). Each such generator lives here as a state array
  (:mod:`rummy_agents.pcg64`: the same draws as numpy's), the games are independent, and each
  is played on its own up to its learner's turn. A policy that reads the game record
  (:func:`policy_reads_rec`: Rummy 51's ``greedy``, ``joker_greedy_kernels.greedy51_rec``)
  decides with no observation written for it: a game's observation row is then written for
  its learner only (the env writes one for a move it leaves to the Python reference).

An agent offers the loops through ``compiled_policy(game)``: a :class:`CompiledPolicy` (the
loops, its decision parameters, a tuple whose layout tells the agent family, see
:func:`policy_decide`, and its generator), or ``None``. ``tests/test_trajectories.py`` replays
the ids recorded before the loops existed.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import get_num_threads, prange, types
from numba.extending import intrinsic, overload

from rummy_agents import joker_greedy_kernels as J
from rummy_agents.gin_rules_kernels import (
    FALLBACK,
    KIND_NOVICE,
    KIND_PLANNER,
    KIND_SIMPLE,
    decide,
    decide_novice,
    decide_planner,
    decide_simple,
)
from rummy_agents.pcg64 import draw, read_rng, seed_state, state_of, to_generator, write_rng
from rummy_env.core.batch import (
    HOOK_OPTIONS,
    PAR_CHUNKS,
    apply_action,
    legal_mask,
    new_work,
    write_obs,
)
from rummy_env.core.jit import kernel
from rummy_env.core.learner import advance_game
from rummy_env.core.rng import next_u64_at

DONE = 0
"""``play_shared``'s status: the learner is to act in every game."""
REFERENCE = 1
"""``play_shared``'s status: row ``j`` of the round is the Python reference's to decide."""
ILLEGAL = 2
"""``play_shared``'s status: the decision of row ``j`` of the round is not legal."""


# -- policies: one decision of an agent family, told apart by the layout of its parameters -----


def policy_decide(policy, obs, masks, b, na, gen, scratch):
    """The action of game ``b`` (its row of ``obs`` and ``masks[b, :na]``) under ``policy``,
    ties drawn from ``gen``; ``FALLBACK`` for a row the Python reference decides.
    """
    raise NotImplementedError


def policy_scratch(policy, na):
    """Buffers :func:`policy_decide` reuses between rows."""
    raise NotImplementedError


def policy_reads_rec(policy):
    """Does :func:`policy_decide_rec` read the game record instead of the observation row (a
    constant of the policy's type)?
    """
    raise NotImplementedError


def policy_decide_rec(policy, rec, cfg, obs, masks, b, na, gen, scratch):
    """:func:`policy_decide` for game record ``rec`` (rule vector ``cfg``) whose player to act
    decides: from the record where :func:`policy_reads_rec` (then row ``b`` of ``obs`` is
    not read, and need not be written), else from row ``b`` of ``obs``. The same action.
    """
    raise NotImplementedError


@overload(policy_reads_rec, **HOOK_OPTIONS)
def _reads_rec(policy):
    reads = _is_51(policy)
    return lambda policy: reads


@overload(policy_decide_rec, **HOOK_OPTIONS)
def _decide_rec(policy, rec, cfg, obs, masks, b, na, gen, scratch):
    if _is_51(policy):

        def impl51(policy, rec, cfg, obs, masks, b, na, gen, scratch):
            a = J.greedy51_rec(rec, cfg, masks, b, policy[0], gen, scratch)
            return FALLBACK if a < 0 else a

        return impl51
    return lambda policy, rec, cfg, obs, masks, b, na, gen, scratch: policy_decide(
        policy, obs, masks, b, na, gen, scratch
    )


def _is_gin(policy: types.Type) -> bool:
    # (kind, best_meld, now_weight, risk_weight, take_margin, auto): gin_rules_kernels.decide
    return isinstance(policy, types.BaseTuple) and len(policy) == 6


KIND_TAGS = {KIND_NOVICE: np.int8, KIND_SIMPLE: np.int16, KIND_PLANNER: np.int32}
"""The integer type that carries a Gin policy's kind in its tuple, so that the loop compiles
that kind's decision only (``decide_novice`` ...); an ``int64`` kind runs :func:`decide`."""


def _gin_decision(policy: Any) -> Any:
    """The decision kernel of a Gin policy's type (a numba tuple type: its kind's decision, by
    the kind's integer type).
    """
    width = getattr(policy[0], "bitwidth", 64)
    return {8: decide_novice, 16: decide_simple, 32: decide_planner}.get(width, decide)


@overload(policy_decide, **HOOK_OPTIONS)
def _gin_decide(policy, obs, masks, b, na, gen, scratch):
    if _is_gin(policy):
        fn = _gin_decision(policy)

        def impl(policy, obs, masks, b, na, gen, scratch):
            kind, best_meld, now_w, risk_w, margin, auto = policy
            a, n = fn(obs[b], masks[b, :na], kind, best_meld, now_w, risk_w, margin, auto,
                      scratch)  # fmt: skip
            if a == FALLBACK:
                return FALLBACK
            if n > 0:
                a += scratch[draw_counted(gen, n)]
            return a

        return impl
    return None


def policy_candidates(policy, obs, masks, b, na, cands):
    """Game ``b``'s decision before its tie-break, for the policies that draw last:
    ``(action, n)``, the move being ``action + cands[draw(gen, n)]`` when ``n > 0``
    (``gin_rules_kernels.decide``'s convention); ``FALLBACK`` for the reference.
    """
    raise NotImplementedError


@overload(policy_candidates, **HOOK_OPTIONS)
def _gin_candidates(policy, obs, masks, b, na, cands):
    if _is_gin(policy):
        fn = _gin_decision(policy)

        def impl(policy, obs, masks, b, na, cands):
            kind, best_meld, now_w, risk_w, margin, auto = policy
            return fn(obs[b], masks[b, :na], kind, best_meld, now_w, risk_w, margin, auto,
                      cands)  # fmt: skip

        return impl
    return None


@overload(policy_scratch, **HOOK_OPTIONS)
def _gin_scratch(policy, na):
    if _is_gin(policy):
        return lambda policy, na: np.empty(52, np.int64)
    return None


def _is_500(policy: types.Type) -> bool:
    # (params, card values): joker_greedy_kernels.greedy500_row
    return isinstance(policy, types.BaseTuple) and len(policy) == 2


def _is_51(policy: types.Type) -> bool:
    # (params,): joker_greedy_kernels.greedy51_row
    return isinstance(policy, types.BaseTuple) and len(policy) == 1


@overload(policy_decide, **HOOK_OPTIONS)
def _joker_decide(policy, obs, masks, b, na, gen, scratch):
    if _is_500(policy):

        def impl500(policy, obs, masks, b, na, gen, scratch):
            a = J.greedy500_scratch(obs, masks, b, policy[0], policy[1], gen, scratch, True)
            return FALLBACK if a < 0 else a

        return impl500
    if _is_51(policy):

        def impl51(policy, obs, masks, b, na, gen, scratch):
            a = J.greedy51_scratch(obs, masks, b, policy[0], gen, scratch, True)
            return FALLBACK if a < 0 else a

        return impl51
    return None


@overload(policy_scratch, **HOOK_OPTIONS)
def _joker_scratch(policy, na):
    if _is_500(policy):
        return lambda policy, na: J.scratch500(policy[0])
    if _is_51(policy):
        return lambda policy, na: J.scratch51(policy[0], na)
    return None


def _is_random(policy: types.Type) -> bool:
    # (): uniform over the legal actions, ``RandomAgent.act``'s draw (the arena's batches)
    return isinstance(policy, types.BaseTuple) and len(policy) == 0


@overload(policy_decide, **HOOK_OPTIONS)
def _random_decide(policy, obs, masks, b, na, gen, scratch):
    if _is_random(policy):

        def impl(policy, obs, masks, b, na, gen, scratch):
            n = 0
            for a in range(na):
                if masks[b, a] == 1:
                    scratch[n] = a
                    n += 1
            if n == 0:
                return FALLBACK
            if n == 1:  # numpy's integers(1) draws nothing
                return scratch[0]
            return scratch[draw_counted(gen, n)]  # legal[rng.integers(legal.size)]

        return impl
    return None


@overload(policy_scratch, **HOOK_OPTIONS)
def _random_scratch(policy, na):
    if _is_random(policy):
        return lambda policy, na: np.empty(na, np.int64)
    return None


@kernel
def draw_counted(gen, n):
    """``draw(gen, n)`` in a counted kernel of its own, for the uncounted loops: numba's
    ``Generator.integers`` allocates.
    """
    return draw(gen, n)


# -- the loops ----------------------------------------------------------------------------------


@kernel(inline="always")
def waiting_rows(states, seat, rows):
    """A round's games, those whose player to act is not the learner, into ``rows`` in game
    order; returns how many.
    """
    k = 0
    for i in range(states.shape[0]):
        if states[i].cur != seat[i]:
            rows[k] = i
            k += 1
    return k


@kernel
def play_shared(states, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
                learner, actions, rewards, term, trunc, final_obs, final_info, final_seat,
                started, policy, gen, rows, acts):  # fmt: skip
    """Apply ``actions`` (the learner's, one per game) if ``learner``, then play the opponents,
    all of one agent drawing its ties from ``gen``, round after round (module docstring).

    Returns:
        (status, k, j): ``DONE``; or ``REFERENCE`` / ``ILLEGAL`` for row ``j`` of the round
        whose ``k`` games are ``rows[:k]``, with ``acts[:j]`` decided (and ``acts[j]`` the
        illegal action).
    """
    return _shared_rounds(states, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
                          learner, actions, rewards, term, trunc, final_obs, final_info,
                          final_seat, started, policy, gen, rows, acts, new_work(states, cfg),
                          policy_scratch(policy, na))  # fmt: skip


@kernel(counted=False)
def _shared_rounds(states, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
                   learner, actions, rewards, term, trunc, final_obs, final_info, final_seat,
                   started, policy, gen, rows, acts, work, scratch):  # fmt: skip
    """:func:`play_shared` in its buffers (uncounted: a counted loop took an atomic reference
    count up and down per array argument of every game's move).
    """
    n = states.shape[0]
    if learner:
        for i in range(n):
            advance_game(states, i, actions[i], cfg, tables, masks, obs, work, seat, acted,
                         streams, fixed_seat, rewards, term, trunc, final_obs, final_info,
                         final_seat, started, True)  # fmt: skip
    for _ in range(1_000_000):
        k = waiting_rows(states, seat, rows)
        if k == 0:
            return DONE, 0, 0
        for j in range(k):
            i = rows[j]
            a = policy_decide(policy, obs, masks, i, na, gen, scratch)
            if a == FALLBACK:
                return REFERENCE, k, j
            acts[j] = a
            if a < 0 or a >= na or masks[i, a] != 1:
                return ILLEGAL, k, j
        for j in range(k):
            advance_game(states, rows[j], acts[j], cfg, tables, masks, obs, work, seat, acted,
                         streams, fixed_seat, rewards, term, trunc, final_obs, final_info,
                         final_seat, started, True)  # fmt: skip
    return ILLEGAL, 0, -1  # the opponents never gave the learner a move


SERIAL_ROUND = 16
"""A round of :func:`play_shared_parallel` with at most this many games runs on the calling
thread (measured: a parallel pass costs more than a few games' moves)."""


@kernel(counted=False)
def _pass(states, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat, lo, hi, mode,
          actions, moves, wait, dec, ties, cands, rewards, term, trunc, final_obs, final_info,
          final_seat, started, policy, work):  # fmt: skip
    """Games ``lo..hi`` of a pass of :func:`play_shared_parallel`: each game moves (``mode``
    1: the learner's ``actions[i]``; 2: ``moves[i]`` where ``wait[i]``; 0: none), then, where
    an opponent is to act, ``wait[i]`` is set and its decision before the tie-break is
    ``dec[i]``, ``ties[i]``, ``cands[i]`` (``policy_candidates``); else ``wait[i]`` is cleared.
    """
    for i in range(lo, hi):
        if mode == 2 and wait[i] == 0:
            continue  # no move this round, and the learner still to act
        if mode != 0:
            a = actions[i] if mode == 1 else moves[i]
            advance_game(states, i, a, cfg, tables, masks, obs, work, seat, acted, streams,
                         fixed_seat, rewards, term, trunc, final_obs, final_info, final_seat,
                         started, True)  # fmt: skip
        if states[i].cur != seat[i]:
            wait[i] = 1
            dec[i], ties[i] = policy_candidates(policy, obs, masks, i, na, cands[i])
        else:
            wait[i] = 0


@kernel(parallel=True)
def play_shared_parallel(states, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
                         learner, actions, rewards, term, trunc, final_obs, final_info,
                         final_seat, started, policy, gen, rows, acts):  # fmt: skip
    """:func:`play_shared` with threads, for the policies whose tie-break is drawn last
    (:func:`policy_candidates`: Gin's rule agents): each round's moves are applied in
    parallel, and each game that moved decides its next opponent move (before the tie-break)
    in the same pass; then the round's ties are drawn from ``gen`` in game order, serially.
    One parallel pass per round, and one for the learner's moves with the first decisions;
    a round of at most :data:`SERIAL_ROUND` games runs serially. Every pass gives a thread
    the same games (chunks of game ids, not of the round's rows): a game's record, mask and
    observation stay in one core's cache. The same moves, draws and results as
    :func:`play_shared` (a game's decision reads only that game; only the generator is shared,
    and it is drawn from in the same order).
    """
    n = states.shape[0]
    cands = np.empty((n, 52), np.int64)  # by game, as ties and dec: a decision before its tie
    ties = np.zeros(n, np.int64)
    dec = np.empty(n, np.int64)
    wait = np.zeros(n, np.int8)  # an opponent is to act (the round's games)
    moves = np.empty(n, np.int64)  # the round's moves, by game
    n_ch = min(n, PAR_CHUNKS)
    mode = 1 if learner else 0
    for ch in prange(n_ch):
        _pass(states, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
              ch * n // n_ch, (ch + 1) * n // n_ch, mode, actions, moves, wait, dec, ties, cands,
              rewards, term, trunc, final_obs, final_info, final_seat, started, policy,
              new_work(states, cfg))  # fmt: skip
    for _ in range(1_000_000):
        k = 0
        for i in range(n):
            if wait[i] != 0:
                rows[k] = i
                k += 1
        if k == 0:
            return DONE, 0, 0
        for j in range(k):
            i = rows[j]
            a = dec[i]
            if a == FALLBACK:
                return REFERENCE, k, j
            if ties[i] > 0:
                a += cands[i, draw(gen, ties[i])]
            acts[j] = a
            moves[i] = a
            if a < 0 or a >= na or masks[i, a] != 1:
                return ILLEGAL, k, j
        if k <= SERIAL_ROUND:
            _pass(states, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat, 0, n,
                  2, actions, moves, wait, dec, ties, cands, rewards, term, trunc, final_obs,
                  final_info, final_seat, started, policy, new_work(states, cfg))  # fmt: skip
            continue
        for ch in prange(n_ch):
            _pass(states, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
                  ch * n // n_ch, (ch + 1) * n // n_ch, 2, actions, moves, wait, dec, ties,
                  cands, rewards, term, trunc, final_obs, final_info, final_seat, started,
                  policy, new_work(states, cfg))  # fmt: skip
    return ILLEGAL, 0, -1  # the opponents never gave the learner a move


@kernel
def seed_agents(streams, i, gens):
    """Seed game ``i``'s agent generators for a new episode as the env seeds the agents it
    builds: ``s`` drawn from the game's stream (``next_u64_at >> 33``), slot ``k`` gets
    ``default_rng(s + k)``.
    """
    s = np.int64(next_u64_at(streams, i) >> np.uint64(33))
    for k in range(gens.shape[1]):
        seed_state(s + k, gens[i, k])


@kernel
def seed_rows(streams, rows, gens):
    """:func:`seed_agents` for games ``rows``, in order."""
    for j in range(rows.shape[0]):
        seed_agents(streams, rows[j], gens)


@kernel(counted=False)
def _play_game(states, i, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
               learner, actions, rewards, term, trunc, final_obs, final_info, final_seat,
               started, policy, gens, scratch, work, saved):  # fmt: skip
    """Game ``i`` of :func:`play_per_game`: the learner's action (if ``learner``), then its
    opponents up to the learner's turn. Returns (status, slot, a) as that function.
    An opponent whose policy reads the game record (:func:`policy_reads_rec`) decides without
    an observation: row ``i`` of ``obs`` is then written for the learner only.
    """
    opp_obs = not policy_reads_rec(policy)
    if learner:
        started[i] = False
        advance_game(states, i, actions[i], cfg, tables, masks, obs, work, seat, acted,
                     streams, fixed_seat, rewards, term, trunc, final_obs, final_info,
                     final_seat, started, opp_obs)  # fmt: skip
        if started[i]:
            seed_agents(streams, i, gens)
    for _ in range(1_000_000):
        cur = states[i].cur
        s = seat[i]
        if cur == s:
            return DONE, 0, 0
        slot = cur - 1 if cur > s else cur
        gen = gens[i, slot]
        for k in range(saved.shape[0]):  # (element by element: uncounted code cannot copy)
            saved[k] = gen[k]
        a = policy_decide_rec(policy, states[i], cfg, obs, masks, i, na, gen, scratch)
        if a == FALLBACK:
            for k in range(saved.shape[0]):  # the reference draws as if the kernel had not tried
                gen[k] = saved[k]
            return REFERENCE, slot, a
        if a < 0 or a >= na or masks[i, a] != 1:
            return ILLEGAL, slot, a
        started[i] = False
        advance_game(states, i, a, cfg, tables, masks, obs, work, seat, acted, streams,
                     fixed_seat, rewards, term, trunc, final_obs, final_info, final_seat,
                     started, opp_obs)  # fmt: skip
        if started[i]:
            seed_agents(streams, i, gens)
    return ILLEGAL, 0, -1  # pragma: no cover - the opponents never gave the learner a move


@kernel
def play_per_game(states, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
                  learner_from, actions, rewards, term, trunc, final_obs, final_info,
                  final_seat, started, policy, gens, start):  # fmt: skip
    """Play games ``start``.. one after the other: in each, the learner's action (in games
    ``learner_from``.. only: the others had theirs), then the opponents up to the learner's
    turn, each seat's agent drawing its ties from its own generator ``gens[i, slot]``
    (reseeded whenever the game is dealt anew). The games are independent, so their order
    changes nothing.

    Returns:
        (status, i, slot, a): ``DONE``; or ``REFERENCE`` / ``ILLEGAL`` for the decision of
        opponent slot ``slot`` in game ``i`` (``a``: the illegal action), every game before
        ``i`` done (the generator is as it was before a ``REFERENCE`` decision).
    """
    n = states.shape[0]
    work = new_work(states, cfg)
    scratch = policy_scratch(policy, na)
    saved = np.empty(gens.shape[2], np.uint64)
    for i in range(start, n):
        status, slot, a = _play_game(
            states, i, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
            i >= learner_from, actions, rewards, term, trunc, final_obs, final_info, final_seat,
            started, policy, gens, scratch, work, saved,
        )  # fmt: skip
        if status != DONE:
            return status, i, slot, a
    return DONE, n, 0, 0


GAMES_PER_TAKE = 8
"""Games a worker of :func:`play_per_game_parallel` takes from the queue at a time: a few, so
that two threads seldom write the same cache line of the per-game arrays (``rewards``,
``started``, ...; one game at a time stepped 8% slower than fixed halves, Rummy 51, 256 games)."""


def _fetch_add_typing(typingctx, arr, i, v):
    sig = types.int64(arr, i, v)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        return builder.atomic_rmw("add", ptr, args[2], "monotonic")

    return sig, codegen


_fetch_add: Any = intrinsic(_fetch_add_typing)
"""``_fetch_add(arr, i, v)``: ``arr[i] += v`` as one atomic operation in compiled code,
returning the value before (``arr``: int64)."""


@kernel(parallel=True)
def play_per_game_parallel(states, cfg, tables, masks, obs, na, seat, acted, streams,
                           fixed_seat, learner_from, actions, rewards, term, trunc, final_obs,
                           final_info, final_seat, started, policy, gens, start,
                           workers):  # fmt: skip
    """:func:`play_per_game` with ``workers`` workers on threads (the same results: the games
    are independent). A game that stops (not ``DONE``) stops only itself; the first of them is
    returned, and :func:`play_per_game` resumes from it.

    Each worker makes the agent's buffers (a dozen arrays, a plan memo) and the game's work
    buffers once (:class:`PerThread`: one worker per thread), then takes the next
    :data:`GAMES_PER_TAKE` games from a shared counter until none are left, so a thread whose
    games were quick takes more. (numba hands each thread a fixed contiguous block of a
    ``prange``; with the games split in halves, the thread with the dearer half set the call's
    time: side by side, the queue stepped Rummy 51's 256 games 1.065x as fast, 500 Rum's
    1.06x.)
    """
    n = states.shape[0]
    workers = max(min(n - start, workers), 1)
    stops = np.full(n, -1, np.int64)
    slots = np.zeros(n, np.int64)
    acts = np.zeros(n, np.int64)
    # (a cache line of its own; read only through _fetch_add: numba does not see the calls
    # change it, and a plain read of it after the loop may be folded to ``start``)
    queue = np.full(8, start, np.int64)
    for _w in prange(workers):
        work = new_work(states, cfg)
        scratch = policy_scratch(policy, na)
        saved = np.empty(gens.shape[2], np.uint64)
        while True:
            lo = _fetch_add(queue, 0, GAMES_PER_TAKE)
            if lo >= n:
                break
            for i in range(lo, min(lo + GAMES_PER_TAKE, n)):
                status, slot, a = _play_game(
                    states, i, cfg, tables, masks, obs, na, seat, acted, streams, fixed_seat,
                    i >= learner_from, actions, rewards, term, trunc, final_obs, final_info,
                    final_seat, started, policy, gens, scratch, work, saved,
                )  # fmt: skip
                if status != DONE:
                    stops[i] = status
                    slots[i] = slot
                    acts[i] = a
    for i in range(start, n):
        if stops[i] >= 0:
            return stops[i], i, slots[i], acts[i]
    return DONE, n, 0, 0


class PerThread:
    """:func:`play_per_game_parallel` called as :func:`play_per_game` (the same arguments),
    with one worker per thread numba runs (read at each call: ``set_num_threads``
    may change it).
    """

    def __init__(self, kernel: Any = play_per_game_parallel) -> None:
        self.kernel = kernel

    def __call__(self, *args: Any) -> Any:
        """The kernel on ``args`` and ``numba.get_num_threads()`` workers."""
        return self.kernel(*args, get_num_threads())


HAND_OVER = 3
"""``play_single``'s status: a hand (or the episode) ended at the last step."""
PENDING = 4
"""``play_single``'s status: the last move's transition is left to the game's ``settle``."""


@kernel
def play_single(states, cfg, tables, masks, obs, na, learner, action, pending, cum, hands0,
                more, policy, gens, saved, scratch):  # fmt: skip
    """The single-agent env's step on its one game (``RummySingleAgentEnv``, over the AEC env's
    batch of one): the learner's ``action`` (none if -1), then the opponents, seat ``q``'s
    agent drawing its ties from generator ``gens[slot]``, until the learner's turn, the end of
    a hand or of the episode. ``cum`` (float64 per seat) is kept as the AEC env keeps its
    ``_cumulative_rewards`` (the actor's entry cleared, then every step's rewards added);
    ``hands0``: the hands played before.

    A transition the game leaves to its ``settle`` hook (Gin's knock scoring) is not done here,
    so that this loop does not compile it: the call returns ``PENDING`` and the env settles it
    (``BatchedGame.settle_pending``, compiled when a hand first ends that way), then calls again
    with ``pending`` (the seat that moved; -1 otherwise) and its move in ``action``, and the
    loop finishes that step's bookkeeping and goes on.

    ``obs`` has two rows: the observation of the opponent deciding, and the learner's, written
    whenever the call returns ``DONE`` or ``HAND_OVER``.

    Returns:
        (status, last seat, last action, learner's reward of its own step, ``more`` plus the
        learner's rewards of the opponents' steps, done, truncated, hands played, x, the seat
        to act): status
        ``DONE`` (the learner's turn), ``HAND_OVER`` (a hand ended at the last step; the env
        records it and calls again), ``REFERENCE`` (opponent slot ``x``'s decision is the
        reference's; its generator is as before it), ``ILLEGAL`` (``x``: the illegal action)
        or ``PENDING`` (seat "to act" played ``x``, whose transition awaits ``settle``). Last
        seat -1: no step was played before.
    """
    rec = states[0]
    work = new_work(states, cfg)
    p_n = rec.rewards.shape[0]
    last_q = -1
    last_a = -1
    own = 0.0
    for _ in range(1_000_000):
        q = rec.cur
        if pending >= 0:  # the env settled this step: only its bookkeeping is left
            q = pending
            a = action
            pending = -1
            action = -1
        elif action >= 0:
            a = action
            action = -1
            if apply_action(rec, cfg, tables, a, masks[0], work):
                return PENDING, last_q, last_a, own, more, False, False, rec.hands_played, \
                    a, q  # fmt: skip
            legal_mask(rec, cfg, tables, masks[0], work)
        else:
            if rec.done or q == learner:
                write_obs(rec, cfg, learner, obs[1])
                return DONE, last_q, last_a, own, more, rec.done != 0, rec.truncated != 0, \
                    rec.hands_played, 0, q  # fmt: skip
            slot = q - 1 if q > learner else q
            gen = gens[slot]
            saved[:] = gen
            write_obs(rec, cfg, q, obs[0])
            a = policy_decide(policy, obs, masks, 0, na, gen, scratch)
            if a == FALLBACK:
                gen[:] = saved
                return REFERENCE, last_q, last_a, own, more, False, False, rec.hands_played, \
                    slot, q  # fmt: skip
            if a < 0 or a >= na or masks[0, a] != 1:
                return ILLEGAL, last_q, last_a, own, more, False, False, rec.hands_played, \
                    a, q  # fmt: skip
            if apply_action(rec, cfg, tables, a, masks[0], work):
                return PENDING, last_q, last_a, own, more, False, False, rec.hands_played, \
                    a, q  # fmt: skip
            legal_mask(rec, cfg, tables, masks[0], work)
        cum[q] = 0.0
        for k in range(p_n):
            cum[k] += np.float64(rec.rewards[k])
        if q == learner and last_q < 0:
            own = np.float64(rec.rewards[learner])
        else:
            more += np.float64(rec.rewards[learner])
        last_q = q
        last_a = a
        if rec.done or rec.hands_played > hands0:
            write_obs(rec, cfg, learner, obs[1])
            return HAND_OVER, last_q, last_a, own, more, rec.done != 0, rec.truncated != 0, \
                rec.hands_played, 0, rec.cur  # fmt: skip
    return ILLEGAL, last_q, -1, own, more, False, False, rec.hands_played, -1, rec.cur


@kernel
def single_scratch(policy, na):
    """``play_single``'s buffers for ``policy``: (generator save, decision scratch)."""
    return np.empty(6, np.uint64), policy_scratch(policy, na)


class CompiledPolicy(NamedTuple):
    """What an agent's ``compiled_policy(game)`` offers the Gymnasium vector env."""

    params: tuple[Any, ...]
    """The decision's parameters (their layout tells the agent family: :func:`policy_decide`)."""
    agent: Any
    """The agent that offers it: its ``rng`` draws the ties of :func:`play_shared`, and its
    ``write_rng_state(st)`` (``rummy_agents.pcg64.SeededGenerator``) seeds a per-game state."""
    shared: Any = play_shared
    """The loop of one agent for every game."""
    shared_parallel: Any = None
    """:func:`play_shared_parallel` where the policy supports it (None: serial only)."""
    per_game: Any = play_per_game
    """The loop of one agent per game and seat, built anew every episode."""
    per_game_parallel: Any = PerThread()
    """:func:`play_per_game` with threads (:class:`PerThread`: the same arguments)."""
    seed_rows: Any = seed_rows
    """Seeds the per-game generators of games dealt anew (:func:`seed_rows`)."""
    single: Any = play_single
    """The single-agent env's step (:func:`play_single`)."""
    single_scratch: Any = single_scratch
    """Its buffers."""
    to_generator: Any = to_generator
    """The numpy generator of a per-game state (for a move the Python reference decides)."""
    state_of: Any = state_of
    """Writes a numpy generator's state back into a per-game state."""
    seed_state: Any = seed_state
    """Writes ``default_rng(seed)``'s state into a per-game state."""
    read_rng: Any = read_rng
    """Writes the state of an agent's generator into a state array, if it is a ``PCG64`` one
    (:func:`play_shared` then draws from the array: a numpy generator costs ~9 us a call to
    pass)."""
    write_rng: Any = write_rng
    """Puts an agent's generator in the state a state array holds."""


__all__ = [
    "DONE",
    "HAND_OVER",
    "ILLEGAL",
    "PENDING",
    "REFERENCE",
    "KIND_TAGS",
    "CompiledPolicy",
    "play_per_game",
    "PerThread",
    "play_per_game_parallel",
    "play_shared",
    "play_shared_parallel",
    "play_single",
    "policy_candidates",
    "policy_decide",
    "policy_decide_rec",
    "policy_reads_rec",
    "policy_scratch",
    "seed_agents",
    "seed_rows",
]
