"""Round-robin arena: every pair of agents plays the same duplicate deals, over processes.

Seeding: deal ``k`` is reset with ``deal_seed(seed, k)`` in every pair (common deals across
pairs); the agents of a game get seeds derived from ``(seed, pair, deal, leg, seat)``. Work is cut
into chunks of deals, played by a pool of ``spawn`` processes (each builds its own env and
agents), and the records are sorted by ``(pair, deal, leg)`` before any statistic is computed, so a
seeded run gives the same results for any number of workers.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import multiprocessing as mp
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rummy_agents.arena import stats as S
from rummy_agents.arena.play import make_env, play_deal
from rummy_agents.arena.registry import GAME_AGENTS, check_agent, make_agent
from rummy_env.core.validate import ArgumentTypeError, check_int, check_options

DEFAULT_MAX_DECISIONS = 100_000
"""Decision cap per game; a game reaching it counts as truncated (neither win nor loss)."""


@dataclass(frozen=True)
class ArenaSpec:
    """What to play.

    Attributes:
        game: game name (a key of ``rummy_env.ENV_MODULES``).
        agents: agent names (registry names or ``module:Class``), at least two, distinct.
        deals: duplicate deals per pair (each deal is two games).
        seed: base seed.
        options: rule options passed to the env.
        workers: processes (1: play in this process).
        max_decisions: decision cap per game.
        bootstrap: bootstrap replicates for the rating intervals (0: none).
        chunk: deals per work item (``None``: automatic).
        record: folder for a game record of every game (``rummy_env.game_records``), in
            ``<record>/<A>_vs_<B>/deal<k>_leg<l>.jsonl``; ``None``: no records.
        batch: play each work item's games as one batch where both agents allow it (compiled
            rule agents, ``random``, a deterministic ``ppo``: :mod:`rummy_agents.arena.batch`);
            the results are the same as game by game (``False``), only faster.
    """

    game: str
    agents: tuple[str, ...]
    deals: int
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    workers: int = 1
    max_decisions: int = DEFAULT_MAX_DECISIONS
    bootstrap: int = 200
    chunk: int | None = None
    record: str | None = None
    batch: bool = True

    def __post_init__(self) -> None:
        """Check every field (one-line messages naming the field, the value and what is
        allowed), then every agent for the game (:func:`~rummy_agents.arena.registry.check_agent`),
        so a bad spec fails here, before any game is played.

        Raises:
            ValueError: for a bad field or agent (``ArgumentTypeError``, also a ``TypeError``,
                for a value of the wrong type).
        """
        if not isinstance(self.game, str) or self.game not in GAME_AGENTS:
            raise ValueError(f"game must be one of {', '.join(GAME_AGENTS)}, got {self.game!r:.80}")
        if isinstance(self.agents, str) or not isinstance(self.agents, Sequence):
            raise ArgumentTypeError(
                f"agents must be a sequence of agent specs, got {self.agents!r:.80}"
            )
        object.__setattr__(self, "agents", tuple(self.agents))
        for name, lo in (
            ("deals", 1),
            ("seed", 0),
            ("workers", 1),
            ("max_decisions", 1),
            ("bootstrap", 0),
        ):
            object.__setattr__(self, name, check_int(name, getattr(self, name), lo=lo))
        if self.chunk is not None:
            object.__setattr__(self, "chunk", check_int("chunk", self.chunk, lo=1))
        if not isinstance(self.batch, bool):
            raise ArgumentTypeError(f"batch must be True or False, got {self.batch!r:.80}")
        object.__setattr__(self, "options", check_options("options", self.options))
        if self.record is not None:
            if not isinstance(self.record, (str, os.PathLike)) or not str(self.record):
                raise ArgumentTypeError(
                    f"record must be a folder path or None, got {self.record!r:.80}"
                )
            object.__setattr__(self, "record", str(self.record))
        if len(self.agents) < 2:
            raise ValueError(f"need at least two agents, got {list(self.agents)}")
        if len(set(self.agents)) != len(self.agents):
            raise ValueError(f"agent names must be distinct, got {list(self.agents)}")
        for a in self.agents:
            check_agent(a, self.game)

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """Index pairs ``(i, j)``, ``i < j``, in round-robin order."""
        return list(itertools.combinations(range(len(self.agents)), 2))


def deal_seed(seed: int, deal: int) -> int:
    """Reset seed of deal ``deal`` (the same in every pair)."""
    return int(np.random.SeedSequence([seed, deal]).generate_state(1, np.uint32)[0])


def agent_seed(seed: int, pair: int, deal: int, leg: int, slot: int) -> int:
    """Seed of the agent with seed slot ``slot`` (:func:`rummy_agents.arena.play.seat_slot`) in one
    game.
    """
    ss = np.random.SeedSequence([seed, 1 + pair, deal, leg, slot])
    return int(ss.generate_state(1, np.uint32)[0])


# ---------------------------------------------------------------------------------------------
# Work items

_ENV_CACHE: dict[Any, Any] = {}


def _env_for(game: str, options: dict[str, Any]) -> Any:
    key = (game, tuple(sorted((k, repr(v)) for k, v in options.items())))
    if key not in _ENV_CACHE:
        _ENV_CACHE[key] = make_env(game, options)
    return _ENV_CACHE[key]


def _file_safe(name: str) -> str:
    """An agent spec as part of a file name (``ppo@checkpoint=a/b.pt``: ``...=a_b.pt``)."""
    return re.sub(r"[^A-Za-z0-9_.=@+-]", "_", name)[:80]


def run_chunk(task: tuple[ArenaSpec, int, int, int]) -> list[dict[str, Any]]:
    """Play deals ``start..stop-1`` of pair ``pair``; returns the game records.

    Args:
        task: ``(spec, pair, start, stop)``.
    """
    spec, pair, start, stop = task
    i, j = spec.pairs[pair]
    names = (spec.agents[i], spec.agents[j])
    env = _env_for(spec.game, spec.options)
    make = functools.partial(make_agent, game=spec.game)  # the game's own agent of a name
    out = []
    slots = len(env.possible_agents) + 1  # seat_slot < players + 1
    folder = None
    if spec.record is not None:
        folder = Path(spec.record) / f"{_file_safe(names[0])}_vs_{_file_safe(names[1])}"
    deals = range(start, stop)
    seeds = [
        [[agent_seed(spec.seed, pair, k, leg, s) for s in range(slots)] for leg in (0, 1)]
        for k in deals
    ]
    played = None
    if spec.batch and folder is None:
        from rummy_agents.arena.batch import play_deals  # noqa: PLC0415 - numba on first use

        resets = [deal_seed(spec.seed, k) for k in deals]
        played = play_deals(env, make, names, resets, seeds, spec.max_decisions)
    for n, k in enumerate(deals):
        if played is not None:
            recs = played[n]
        else:
            record = None if folder is None else folder / f"deal{k:05d}"
            recs = play_deal(
                env, make, names, deal_seed(spec.seed, k), seeds[n], spec.max_decisions, record
            )
        for r in recs:
            r.update({"pair": pair, "deal": k, "agent_a": names[0], "agent_b": names[1]})
            out.append(r)
    return out


def compile_task(task: tuple[ArenaSpec, str]) -> None:
    """Compile one part of the batches of ``spec`` (``rummy_agents.arena.batch.compile_part``)
    in a worker, before the games start.
    """
    from rummy_agents.arena.batch import compile_part  # noqa: PLC0415 - numba on first use

    spec, part = task
    with contextlib.suppress(Exception):  # a failure here fails the games after, with its message
        compile_part(
            _env_for(spec.game, spec.options), functools.partial(make_agent, game=spec.game), part
        )


def _compile_tasks(spec: ArenaSpec) -> list[tuple[ArenaSpec, str]]:
    """The parts of the batches to compile side by side in the workers (the slowest first:
    a joker game's ``greedy`` compiles longer than the game's own kernels).
    """
    if not spec.batch or spec.workers < 2 or spec.record is not None:
        return []
    agents = sorted(spec.agents, key=lambda a: a.split("@")[0] == "random")
    return [(spec, f"agent:{a}") for a in agents] + [(spec, "game")]


def _tasks(spec: ArenaSpec) -> list[tuple[ArenaSpec, int, int, int]]:
    chunk = spec.chunk or max(1, min(50, math.ceil(spec.deals / (8 * spec.workers))))
    tasks = []
    for start in range(0, spec.deals, chunk):  # interleave pairs so progress is even
        for p in range(len(spec.pairs)):
            tasks.append((spec, p, start, min(spec.deals, start + chunk)))
    return tasks


def _iter_results(spec: ArenaSpec, tasks: list) -> Iterator[list[dict[str, Any]]]:
    if spec.workers == 1:
        for t in tasks:
            yield run_chunk(t)
        return
    ctx = mp.get_context("spawn")
    with one_thread_each():
        pool = ctx.Pool(spec.workers)
    with pool:
        # on a first run every worker would compile every kernel; instead each compiles a
        # different part, and the others load it from numba's cache
        pool.map(compile_task, _compile_tasks(spec), chunksize=1)
        yield from pool.imap_unordered(run_chunk, tasks)


WORKER_THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)
"""Variables that size the thread pools (BLAS and numba's) of the arena's worker processes."""


@contextlib.contextmanager
def one_thread_each() -> Iterator[None]:
    """Start worker processes with one BLAS and one numba thread each (unless the variables
    are set).

    The workers already fill the cores. A network's small matrix products split over
    threads only make the threads wait on each other (ppo_search ran 2.8 times slower a move
    with 2 workers on 2 cores), and the search's batched steps (numba ``prange``) leave
    numba's OpenMP thread spinning between them on the other workers' cores (two
    single-process ppo_search arenas side by side ran about 6 times faster with one thread
    each, set by the environment). ``--workers 1`` runs in the calling process and keeps
    its threads.
    """
    unset = [v for v in WORKER_THREAD_VARIABLES if v not in os.environ]
    for v in unset:
        os.environ[v] = "1"
    try:
        yield
    finally:
        for v in unset:
            os.environ.pop(v, None)


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class PairStats:
    """Statistics of one pair, from agent A's point of view.

    Win rate = A wins / (A wins + B wins): draws (dead hands) and truncated games are left out
    and reported separately; ``score_rate`` counts draws as half a win. The margin is half of A's
    points minus B's points per game (``(return_a - return_b) / 2``; for zero-sum games like Gin
    Rummy that is A's return; in 500 Rum twice the margin is the score difference), with a t
    interval over the duplicate deals of the pair-averaged margin (``margin_lo``/``margin_hi``)
    and, for comparison, the half-width a t interval would have if
    the games were independent (``margin_half_indep``).
    """

    agent_a: str
    agent_b: str
    games: int
    wins_a: int
    wins_b: int
    draws: int
    truncated: int
    win_rate: float
    win_lo: float
    win_hi: float
    score_rate: float
    margin: float
    margin_lo: float
    margin_hi: float
    margin_half_indep: float
    deals: int
    outcomes: dict[str, int]
    mean_decisions: float


def pair_stats(a: str, b: str, recs: Sequence[dict[str, Any]], level: float = 0.95) -> PairStats:
    """Statistics of one pair from its game records (both legs of every deal)."""
    res = np.array([r["result"] for r in recs], dtype=np.int64)
    trunc = np.array([bool(r["truncated"]) for r in recs])
    margins = np.array([r["margin"] for r in recs], dtype=np.float64)
    wa = int((res == 1).sum())
    wb = int((res == -1).sum())
    tr = int(trunc.sum())
    dr = int(((res == 0) & ~trunc).sum())
    dec = wa + wb
    lo, hi = S.wilson_interval(wa, dec, level)
    by_deal: dict[int, list[float]] = {}
    bad: set[int] = set()
    for r in recs:
        by_deal.setdefault(r["deal"], []).append(r["margin"])
        if r["truncated"]:
            bad.add(r["deal"])
    paired = np.array([np.mean(v) for d, v in sorted(by_deal.items()) if d not in bad])
    m, mlo, mhi, _ = S.mean_interval(paired, level)
    ok = margins[~trunc]
    _, ilo, ihi, _ = S.mean_interval(ok, level)
    outcomes: dict[str, int] = {}
    for r in recs:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    n_ok = len(recs) - tr
    return PairStats(
        agent_a=a,
        agent_b=b,
        games=len(recs),
        wins_a=wa,
        wins_b=wb,
        draws=dr,
        truncated=tr,
        win_rate=wa / dec if dec else math.nan,
        win_lo=lo,
        win_hi=hi,
        score_rate=(wa + 0.5 * dr) / n_ok if n_ok else math.nan,
        margin=m,
        margin_lo=mlo,
        margin_hi=mhi,
        margin_half_indep=(ihi - ilo) / 2 if ok.size > 1 else math.inf,
        deals=len(by_deal),
        outcomes=dict(sorted(outcomes.items())),
        mean_decisions=float(np.mean([r["decisions"] for r in recs])) if recs else math.nan,
    )


@dataclass
class Rating:
    """Bradley-Terry rating of one agent (Elo scale; anchored: ``random`` = 0 if present, else
    mean 0), with a percentile bootstrap interval over duplicate deals.
    """

    agent: str
    rating: float
    lo: float
    hi: float
    games: int
    score: float


@dataclass
class ArenaResult:
    """Everything a run produced.

    Attributes:
        spec: what was played.
        records: game records sorted by ``(pair, deal, leg)``.
        pairs: per-pair statistics (round-robin order).
        ratings: per-agent ratings (spec order).
        seconds: wall time of the games.
    """

    spec: ArenaSpec
    records: list[dict[str, Any]]
    pairs: list[PairStats]
    ratings: list[Rating]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no per-game records)."""
        return {
            "spec": asdict(self.spec),
            "pairs": [asdict(p) for p in self.pairs],
            "ratings": [asdict(r) for r in self.ratings],
            "seconds": self.seconds,
            "games": len(self.records),
        }


def compute_ratings(
    spec: ArenaSpec, records: Sequence[dict[str, Any]], level: float = 0.95
) -> list[Rating]:
    """Bradley-Terry ratings of all agents from all games (draws count half a win each;
    truncated games are left out), with a bootstrap over duplicate deals.
    """
    k = len(spec.agents)
    wins = np.zeros((k, k))
    units = []
    games = np.zeros(k, np.int64)
    score = np.zeros(k)
    for p, (i, j) in enumerate(spec.pairs):
        per_deal: dict[int, list[float]] = {}
        for r in records:
            if r["pair"] != p or r["truncated"]:
                continue
            s = 1.0 if r["result"] == 1 else (0.5 if r["result"] == 0 else 0.0)
            acc = per_deal.setdefault(r["deal"], [0.0, 0.0])
            acc[0] += s
            acc[1] += 1.0 - s
        arr = np.array([per_deal[d] for d in sorted(per_deal)], dtype=np.float64).reshape(-1, 2)
        units.append((i, j, arr))
        tot = arr.sum(axis=0) if arr.size else np.zeros(2)
        wins[i, j] += tot[0]
        wins[j, i] += tot[1]
        games[i] += int(round(tot.sum()))
        games[j] += int(round(tot.sum()))
        score[i] += tot[0]
        score[j] += tot[1]
    anchor = spec.agents.index("random") if "random" in spec.agents else None
    rated = S.bt_ratings(wins, anchor=anchor)
    if spec.bootstrap > 0:
        lo, hi = S.bt_bootstrap(units, k, spec.bootstrap, spec.seed, anchor=anchor, level=level)
    else:
        lo = hi = np.full(k, math.nan)
    return [
        Rating(
            agent=spec.agents[a],
            rating=float(rated[a]),
            lo=float(lo[a]),
            hi=float(hi[a]),
            games=int(games[a]),
            score=float(score[a] / games[a]) if games[a] else math.nan,
        )
        for a in range(k)
    ]


def run_arena(spec: ArenaSpec, progress: bool = True) -> ArenaResult:
    """Play the round robin and compute every statistic.

    Args:
        spec: what to play.
        progress: show a tqdm progress bar (on stderr) counting games.

    Returns:
        The :class:`ArenaResult`.
    """
    from tqdm import tqdm

    make_env(spec.game, spec.options)  # fail fast on a bad game or option, here
    tasks = _tasks(spec)
    total = 2 * spec.deals * len(spec.pairs)
    records: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    with tqdm(
        total=total, unit="game", disable=not progress, file=sys.stderr, dynamic_ncols=True
    ) as bar:
        for recs in _iter_results(spec, tasks):
            records.extend(recs)
            bar.update(len(recs))
    seconds = time.perf_counter() - t0
    records.sort(key=lambda r: (r["pair"], r["deal"], r["leg"]))
    pairs = []
    for p, (i, j) in enumerate(spec.pairs):
        recs = [r for r in records if r["pair"] == p]
        pairs.append(pair_stats(spec.agents[i], spec.agents[j], recs))
    ratings = compute_ratings(spec, records)
    return ArenaResult(spec, records, pairs, ratings, seconds)


__all__ = [
    "DEFAULT_MAX_DECISIONS",
    "WORKER_THREAD_VARIABLES",
    "ArenaResult",
    "ArenaSpec",
    "PairStats",
    "Rating",
    "agent_seed",
    "compute_ratings",
    "deal_seed",
    "one_thread_each",
    "pair_stats",
    "run_arena",
    "run_chunk",
]
