"""Command line interface: ``rummy-env <command> [options]``.

Commands:
    simulate: play random games of every game variant with the compiled kernels and print a
        summary table (speed, decisions per game, how hands ended, mean scores).
    arena: round robin between agents (``rummy_agents.arena``, imported lazily) with duplicate
        deals, win rates, score margins, Bradley-Terry ratings, CSV/JSON files and a heatmap
        (in ``./rummy_env_runs/arena_<game>``, or ``--out DIR``).

A user error (a bad flag, option, agent spec, number or folder) is one line
``rummy-env: error: ...`` on stderr and exit status 2, found before any game is played
(:class:`CLIError`; argparse's own errors too).

Every command is a function ``cmd_<name>(args) -> int`` registered in :data:`COMMANDS` by a
``add_<name>_parser`` function, so further commands (``arena``, ``play``, ``benchmark``,
``train``) plug in the same way. Games provide random play for ``simulate`` through
:func:`register_simulator`.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import numpy as np

from rummy_agents.paths import check_out_folder
from rummy_env.games import GAMES

PROG = "rummy-env"


class CLIError(Exception):
    """A user error: printed as one line ``rummy-env: error: ...``, exit status 2."""


# ---------------------------------------------------------------------------------------------
# Random-play simulators, one per game

SimulateFn = Callable[[Any, int, int], dict[str, np.ndarray]]
"""``simulate(config, n_games, seed) -> arrays``: play ``n_games`` random episodes, game ``i``
seeded with ``seed + i`` (so chunked calls with shifted seeds give the same games as one call).

The returned dict holds (n_games,) int arrays ``outcome`` (code of the last hand of the episode,
an index into the simulator's ``outcome_names``), ``decisions`` (per episode), ``hands`` (hands
played per episode) and a (n_games, num_players) array ``points`` (hand points, or match totals for
multi-hand episodes).
"""


class Simulator(NamedTuple):
    """How ``simulate`` plays one game: the random-play function and its outcome labels."""

    simulate: SimulateFn
    outcome_names: tuple[str, ...]


SIMULATORS: dict[str, Simulator] = {}
"""Game name -> random-play simulator (see :func:`register_simulator`)."""

VARIANTS: dict[str, dict[str, dict[str, Any]]] = {}
"""Game name -> variant name -> rule options: the preset variants ``simulate`` plays."""


def register_simulator(
    game: str,
    simulate: SimulateFn,
    outcome_names: Sequence[str],
    variants: dict[str, dict[str, Any]] | None = None,
) -> None:
    """Make a game playable by ``rummy-env simulate``.

    Args:
        game: name of the game in ``rummy_env.games.GAMES``.
        simulate: random-play function, see :data:`SimulateFn`.
        outcome_names: label of each outcome code (code 0 means "no outcome", e.g. truncated).
        variants: preset variants (name -> rule options); default ``{"standard": {}}``.

    """
    SIMULATORS[game] = Simulator(simulate, tuple(outcome_names))
    VARIANTS[game] = dict(variants) if variants else {"standard": {}}


def _game_simulator(name: str, sign: int = 1) -> SimulateFn:
    """Random play of a game with its compiled parallel kernel
    (``BatchedGame.play_random``), one episode per game; ``sign=-1`` turns penalties into
    points (higher is better).
    """

    def simulate(config: Any, n_games: int, seed: int) -> dict[str, np.ndarray]:
        _, game_cls = GAMES[name]
        game = game_cls(config, n_games)
        game.seed(seed)
        out = game.play_random(1)
        return {
            "outcome": out["outcome"][:, 0],
            "decisions": out["decisions"][:, 0],
            "hands": out["hands"][:, 0],
            "points": sign * out["points"][:, 0],
        }

    simulate.__doc__ = f"Random {name} with the compiled parallel kernel (one episode per game)."
    return simulate


def _register_builtin() -> None:
    from rummy_env.encodings import five_hundred_rum as E500
    from rummy_env.encodings import rummy51 as E51
    from rummy_env.encodings.gin_rummy import OUTCOME_NAMES

    register_simulator(
        "gin_rummy",
        _game_simulator("gin_rummy"),
        OUTCOME_NAMES,
        variants={
            "standard": {},
            "oklahoma": {"oklahoma": True},
            "match": {"episode": "match"},
            "eleven_card_deal": {"eleven_card_deal": True},
            "fiftieth_card_action": {"fiftieth_card_action": True},
            "manual_melds": {"auto_meld": False},
            "3_players": {"num_players": 3},
            "4_players": {"num_players": 4},
            "3_players_match": {"num_players": 3, "episode": "match"},
            "4_players_match": {"num_players": 4, "episode": "match"},
        },
    )
    register_simulator(
        "five_hundred_rum",
        _game_simulator("five_hundred_rum"),
        E500.OUTCOME_NAMES,
        variants={
            "standard": {},
            "4_players": {"num_players": 4},
            "8_players": {"num_players": 8},
            "layoff_only_calls": {"rummy_call": "layoff_only"},
            "no_calls_must_meld": {"rummy_call": "none", "must_meld_discard": True},
            "floating": {"going_out": "floating"},
            "discard_required": {"going_out": "discard_required"},
            "game_to_500": {"episode": "game"},
        },
    )
    register_simulator(
        "rummy51",
        _game_simulator("rummy51", sign=-1),  # points: minus the penalties
        E51.OUTCOME_NAMES,
        variants={
            "standard": {},
            "4_players": {"num_players": 4},
            "6_players": {"num_players": 6},
            "joker_must_be_melded": {"retrieved_joker_must_be_melded": True},
            "discard_draw_needs_opening": {"discard_draw_requires_opening": True},
            "no_reshuffle": {"max_reshuffles": 0},
            "match_to_101": {"episode": "match"},
        },
    )


_register_builtin()


# ---------------------------------------------------------------------------------------------
# Option parsing


def parse_value(text: str) -> Any:
    """``"12"`` -> 12, ``"true"``/``"false"`` -> bool, ``"none"`` -> None, else the string."""
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    for base in (10, 0):  # "010" -> 10, "0x10" -> 16
        try:
            return int(text, base)
        except ValueError:
            pass
    return text


def parse_options(items: Sequence[str]) -> dict[str, Any]:
    """Parse repeated ``key=value`` strings into rule options.

    Raises:
        CLIError: for an item without ``=`` or with an empty key.

    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CLIError(f"bad --option {item!r}: expected key=value (e.g. knock_limit=5)")
        out[key] = parse_value(value)
    return out


def make_config(game: str, options: dict[str, Any], what: str = "--option") -> Any:
    """Build a game's config from options; a bad option becomes a one-line ``CLIError``."""
    cfg_cls, _ = GAMES[game]
    try:
        return cfg_cls.from_kwargs(**options)
    except (ValueError, TypeError) as e:
        shown = " ".join(f"{k}={v}" for k, v in options.items())
        raise CLIError(f"bad {what} for {game} ({shown}): {e}") from None


# ---------------------------------------------------------------------------------------------
# simulate


@dataclass
class SimResult:
    """Summary statistics of one simulated variant."""

    game: str
    variant: str
    options: dict[str, Any]
    games: int
    seconds: float
    decisions: float
    hands: float
    outcome_pct: dict[str, float]
    points: list[float]
    winner_points: float
    multi_hand: bool

    @property
    def games_per_s(self) -> float:
        """Games (episodes) per second of simulator wall time."""
        return self.games / self.seconds if self.seconds > 0 else math.inf


def summarize(
    game: str,
    variant: str,
    options: dict[str, Any],
    arrays: dict[str, np.ndarray],
    seconds: float,
    outcome_names: Sequence[str],
) -> SimResult:
    """Turn concatenated simulator arrays into a :class:`SimResult`."""
    oc = arrays["outcome"]
    n = int(oc.shape[0])
    counts = np.bincount(oc, minlength=len(outcome_names))
    pct = {name: 100.0 * counts[i] / n for i, name in enumerate(outcome_names)}
    pts = arrays["points"]
    hands = arrays["hands"]
    decided = oc != 0
    if outcome_names and "dead_hand" in outcome_names:
        decided &= oc != outcome_names.index("dead_hand")
    best = pts.max(axis=1)
    return SimResult(
        game=game,
        variant=variant,
        options=options,
        games=n,
        seconds=seconds,
        decisions=float(arrays["decisions"].mean()),
        hands=float(hands.mean()),
        outcome_pct=pct,
        points=[float(x) for x in pts.mean(axis=0)],
        winner_points=float(best[decided].mean()) if decided.any() else 0.0,
        multi_hand=bool((hands > 1).any()),
    )


CHUNK_SECONDS = 0.25
"""Target wall time of one simulator call (the progress bar moves about this often)."""


def _next_chunk(done_now: int, seconds: float, remaining: int) -> int:
    """Games for the next simulator call, from the rate of the last one."""
    rate = done_now / max(seconds, 1e-6)
    return max(1, min(remaining, max(64, min(1 << 16, int(rate * CHUNK_SECONDS)))))


def run_variant(
    game: str,
    variant: str,
    options: dict[str, Any],
    games: int,
    seed: int,
    progress: Any = None,
) -> SimResult:
    """Simulate ``games`` random episodes of one variant, in chunks (game ``i``: ``seed + i``).

    Chunks are sized to take about :data:`CHUNK_SECONDS`; since game ``i`` is always seeded with
    ``seed + i`` the results do not depend on the chunking.
    """
    sim = SIMULATORS[game]
    config = make_config(game, options, what=f"options for variant {variant!r}")
    sim.simulate(config, 1, seed)  # warm-up: compile (or load) the kernel outside the timing
    parts: list[dict[str, np.ndarray]] = []
    elapsed = 0.0
    done = 0
    n = min(games, 256)
    while done < games:
        t0 = time.perf_counter()
        parts.append(sim.simulate(config, n, seed + done))
        dt = time.perf_counter() - t0
        elapsed += dt
        done += n
        if progress is not None:
            progress.update(n)
        n = _next_chunk(n, dt, games - done)
    arrays = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return summarize(game, variant, options, arrays, elapsed, sim.outcome_names)


def _select_variants(game: str, args: argparse.Namespace, options: dict[str, Any]) -> list[str]:
    presets = VARIANTS[game]
    if args.variants is None:
        # user options alone: one "custom" variant; otherwise every preset
        return ["custom"] if options else list(presets)
    if args.variants == "all":
        return list(presets)
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in presets and v != "custom"]
    if unknown or not names:
        raise CLIError(
            f"unknown variant(s) {unknown} for {game}; available: all, custom, "
            + ", ".join(presets)
        )
    return names


def _fmt_num(x: float) -> str:
    if not math.isfinite(x):
        return "inf"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.1f}"
    return f"{x:.2f}"


def format_table(results: Sequence[SimResult], fmt: str = "plain") -> str:
    """Render results as a fixed-width text table (``plain``) or a ``markdown`` table."""
    outcome_cols: list[str] = []
    for r in results:
        for name, p in r.outcome_pct.items():
            if name not in outcome_cols and (name != "none" or p > 0):
                outcome_cols.append(name)
    max_players = max((len(r.points) for r in results), default=2)
    headers = ["game", "variant", "games", "games/s", "decisions", "hands"]
    headers += [f"{c}%" for c in outcome_cols]
    headers += [f"p{i} pts" for i in range(max_players)] + ["winner pts"]
    rows = []
    for r in results:
        row = [
            r.game,
            r.variant,
            f"{r.games:,}",
            _fmt_num(r.games_per_s),
            _fmt_num(r.decisions),
            _fmt_num(r.hands),
        ]
        row += [f"{r.outcome_pct.get(c, 0.0):.2f}" for c in outcome_cols]
        row += [_fmt_num(p) for p in r.points] + [""] * (max_players - len(r.points))
        row.append(_fmt_num(r.winner_points))
        rows.append(row)
    left = {0, 1}
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str], sep: str) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return sep.join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in pairs)

    if fmt == "markdown":
        rule = [("-" * w if i in left else "-" * (w - 1) + ":") for i, w in enumerate(widths)]
        out = [line(headers, " | "), " | ".join(rule)] + [line(row, " | ") for row in rows]
        return "\n".join(f"| {s} |" for s in out)
    out = [line(headers, "  "), "  ".join("-" * w for w in widths)]
    out += [line(row, "  ") for row in rows]
    return "\n".join(out)


def _notes(results: Sequence[SimResult], seed: int) -> list[str]:
    notes = [
        f"seed {seed} (game i of each variant uses seed + i)",
        "games/s: wall time of the simulator calls (setup, seeding, play), after a warm-up call",
        "decisions, hands: mean per game; outcome %: how the (last) hand of each game ended",
        "p0/p1 pts: mean points per game; winner pts: mean winner points over games with a winner",
    ]
    if any(r.multi_hand for r in results):
        notes.append("match: outcome of the final hand; points are match totals (with bonuses)")
    return notes


def cmd_simulate(args: argparse.Namespace) -> int:
    """Run ``rummy-env simulate``."""
    from tqdm import tqdm

    if args.games < 1:
        raise CLIError(f"--games must be an integer >= 1, got {args.games}")
    if args.seed is not None and args.seed < 0:
        raise CLIError(f"--seed must be an integer >= 0, got {args.seed}")
    games = args.game or [g for g in GAMES if g in SIMULATORS]
    if not args.game:
        for g in GAMES:
            if g not in SIMULATORS:
                print(f"{PROG} simulate: note: {g} has no random-play simulator", file=sys.stderr)
    for g in games:
        if g not in GAMES:
            raise CLIError(f"unknown game {g!r}; available: {', '.join(GAMES)}")
        if g not in SIMULATORS:
            raise CLIError(f"game {g!r} has no random-play simulator registered")
    options = parse_options(args.option)
    plan: list[tuple[str, str, dict[str, Any]]] = []
    for g in games:
        if options:
            make_config(g, options)  # a bad --option is reported as such, before any variant
        for v in _select_variants(g, args, options):
            opts = {**VARIANTS[g].get(v, {}), **options}
            make_config(g, opts, what=f"options for variant {v!r}")
            plan.append((g, v, opts))
    seed = args.seed
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint32)[0])

    results = []
    with tqdm(
        total=args.games * len(plan),
        unit="game",
        unit_scale=True,
        disable=args.no_progress,
        file=sys.stderr,
        dynamic_ncols=True,
    ) as bar:
        for g, v, opts in plan:
            bar.set_description(f"{g}/{v}")
            results.append(run_variant(g, v, opts, args.games, seed, progress=bar))
    print(format_table(results, args.format))
    if args.format == "markdown":
        print()
    for note in _notes(results, seed):
        print(f"- {note}" if args.format == "markdown" else note)
    return 0


def add_simulate_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``simulate`` command."""
    p = sub.add_parser(
        "simulate",
        help="play random games of every variant and print a summary table",
        description=(
            "Play uniformly random legal moves in every game variant with the compiled kernels "
            "and print games/s, decisions per game, how hands ended and mean scores. Random "
            "players rarely knock, so most hands are dead hands."
        ),
    )
    p.add_argument("--games", type=int, default=5000, help="games per variant (default 5000)")
    p.add_argument("--seed", type=int, default=None, help="base seed (game i uses seed + i)")
    p.add_argument(
        "--game",
        action="append",
        default=None,
        metavar="NAME",
        help=f"game to simulate, repeatable (default: all of {', '.join(GAMES)})",
    )
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="rule option applied to every variant, repeatable (values: int, true/false, none, "
        "or text); with --option and no --variants only the 'custom' variant is played",
    )
    p.add_argument(
        "--variants",
        default=None,
        metavar="LIST",
        help="'all' or comma-separated preset names (gin_rummy: "
        + ", ".join(VARIANTS.get("gin_rummy", {}))
        + "; 'custom': the --option values alone); default: all presets",
    )
    p.add_argument("--format", choices=("plain", "markdown"), default="plain", help="table format")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=cmd_simulate)


# ---------------------------------------------------------------------------------------------
# arena


BASELINES = {
    "gin_rummy": "random,novice,simple",
    "five_hundred_rum": "random,greedy",
    "rummy51": "random,greedy",
}
"""The baseline agents of each game: what ``rummy-env arena --game all`` plays."""

RUNS_DIR = "rummy_env_runs"
"""Default parent folder of the arena's files, relative to the current folder: ``rummy-env
arena`` writes into ``rummy_env_runs/arena_<game>`` (``--game all``:
``rummy_env_runs/arena_<game>_baselines``) unless ``--out`` names a folder. It is never a tracked
file of the repository (``results/`` holds the published runs; ``.gitignore`` lists
``rummy_env_runs/``), and it works the same from an installed wheel, where the package folder is
no place for a user's files.
"""

_SPEC_FLAGS = {
    "deals": "--deals",
    "seed": "--seed",
    "workers": "--workers",
    "max_decisions": "--max-decisions",
    "bootstrap": "--bootstrap",
}
"""``ArenaSpec`` fields set by a flag: an error about the field names the flag instead."""


@dataclass
class ArenaJob:
    """One round robin of ``rummy-env arena``: what to play and where its files go."""

    spec: Any
    out: Path | None


def _arena_error(error: Exception) -> CLIError:
    """A ``ValueError``/``TypeError`` of ``ArenaSpec`` as a CLI error naming the flag."""
    text = str(error)
    field_name = text.split(" ", 1)[0]
    if field_name in _SPEC_FLAGS:
        text = _SPEC_FLAGS[field_name] + text[len(field_name) :]
    return CLIError(text)


def check_out_dir(path: Path, flag: str = "--out") -> Path:
    """``path`` if the arena can write its files there
    (:func:`rummy_agents.paths.check_out_folder`); ``flag`` names the option in the messages.

    Raises:
        CLIError: if it is a file, or under a file, or cannot be written.
    """
    try:
        return check_out_folder(path, flag)
    except ValueError as e:
        raise CLIError(str(e)) from None


def arena_jobs(args: argparse.Namespace) -> list[ArenaJob]:
    """Every round robin ``rummy-env arena`` will play, each checked (game, options, numbers,
    agents, out folder) before the first game is played: with ``--game all`` the agents of every
    game are checked first.

    Raises:
        CLIError: for the first mistake found.
    """
    try:
        from rummy_agents.arena import ArenaSpec
    except ImportError as e:  # pragma: no cover - the agents package ships with rummy_env
        raise CLIError(f"the arena needs the 'agents' package: {e}") from None
    if args.game == "all":
        if args.option or args.episode:
            raise CLIError(
                "--game all plays the default rules of every game: --option and --episode "
                "need one --game"
            )
        games = list(BASELINES)
    elif args.game in GAMES:
        games = [args.game]
    else:
        raise CLIError(f"unknown game {args.game!r}; available: {', '.join(GAMES)}, all")
    options = parse_options(args.option)
    if args.episode is not None:
        options["episode"] = args.episode
    seed = args.seed
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint32)[0])
    record_root = None if args.record is None else check_out_dir(Path(args.record), "--record")
    jobs = []
    for game in games:
        make_config(game, options)
        names = args.agents if args.agents is not None else BASELINES[game]
        agents = tuple(a.strip() for a in names.split(",") if a.strip())
        try:
            spec = ArenaSpec(
                game=game,
                agents=agents,
                deals=args.deals,
                seed=seed,
                options=options,
                workers=args.workers,
                max_decisions=args.max_decisions,
                bootstrap=args.bootstrap,
                record=None if record_root is None else str(record_root / game),
            )
        except (ValueError, TypeError) as e:
            raise _arena_error(e) from None
        if args.out is not None and args.out.lower() == "none":
            out = None
        elif args.game == "all":  # the baselines' folders as published under results/
            folder = f"arena_{game}" if args.agents is not None else f"arena_{game}_baselines"
            out = Path(args.out or RUNS_DIR) / folder
        else:
            out = Path(args.out or Path(RUNS_DIR, f"arena_{game}"))
        jobs.append(ArenaJob(spec, out if out is None else check_out_dir(out)))
    return jobs


def cmd_arena(args: argparse.Namespace) -> int:
    """Run ``rummy-env arena`` (the work is done by ``rummy_agents.arena``, imported here); with
    ``--game all``, one round robin per game (the game's baselines unless ``--agents``), default
    rules. Everything is checked (:func:`arena_jobs`) before the first game is played.
    """
    jobs = arena_jobs(args)
    from rummy_agents.arena import markdown, run_arena, write_outputs

    skipped: dict[str, None] = {}  # notes of what was not written (the heatmap), in order
    for job in jobs:
        if args.game == "all":
            print(f"\n## {job.spec.game}\n")
        try:
            result = run_arena(job.spec, progress=not args.no_progress)
        except ValueError as e:
            raise CLIError(str(e)) from None
        print(markdown(result))
        if job.spec.record is not None:
            print(f"\nwrote a game record of every game under {job.spec.record}")
        if job.out is not None:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                paths = write_outputs(result, job.out, png=not args.no_plot)
            for w in caught:
                skipped[" ".join(str(w.message).split())] = None
            print(f"\nwrote {', '.join(str(p) for p in paths)}")
    for note in skipped:
        print(f"{PROG}: note: {note}", file=sys.stderr)
    return 0


def add_arena_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``arena`` command."""
    p = sub.add_parser(
        "arena",
        help="round robin between agents with duplicate deals, win rates and ratings",
        description=(
            "Play every pair of agents on the same duplicate deals (each deal twice, seats "
            "exchanged, same cards), in parallel processes, and report wins, win rates with "
            "Wilson intervals, score margins with t intervals, Bradley-Terry ratings, CSV/JSON "
            "files and a win-rate heatmap (needs matplotlib: pip install 'rummy_env[plot]'). A "
            "seeded run gives the same results for any --workers."
        ),
    )
    p.add_argument(
        "--game",
        default="gin_rummy",
        help="game name, or 'all': the baselines of every game, one after the other "
        "(default gin_rummy)",
    )
    p.add_argument(
        "--agents",
        default=None,
        help="comma-separated agent specs, name or name@key=value@key=value (Gin: random, "
        "novice, simple, simple_best, planner, ismcts, heuristic, openspiel; 500 Rum: random, "
        "greedy, ismcts, heuristic; Rummy 51: random, greedy, greedy_plus, ismcts, heuristic; "
        "any game: ppo@checkpoint=PATH, package.module:Class); every agent and parameter is "
        "checked for every game before a game is played; default: the game's baselines ("
        + "; ".join(f"{g}: {a}" for g, a in BASELINES.items())
        + ")",
    )
    p.add_argument(
        "--deals", type=int, default=1000, help="duplicate deals per pair (default 1000)"
    )
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--seed", type=int, default=None, help="base seed (default: random, printed)")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="rule option, repeatable (as in simulate)",
    )
    p.add_argument(
        "--episode",
        choices=("hand", "match", "game"),
        default=None,
        help="episode: one hand, or a Gin match / a 500 Rum game",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help=f"folder for the CSV/JSON/markdown files and the heatmap (default "
        f"./{RUNS_DIR}/arena_<game>, in the current folder; with --game all, a folder per game "
        "in DIR: arena_<game>_baselines, or arena_<game> with --agents, default DIR "
        f"./{RUNS_DIR}, so --out results refreshes the published baselines; 'none': no files)",
    )
    p.add_argument(
        "--record",
        default=None,
        metavar="DIR",
        help="write a game record of every game (JSON lines; rummy-env replay FILE plays one "
        "back) to DIR/<game>/<A>_vs_<B>/deal<k>_leg<l>.jsonl",
    )
    p.add_argument(
        "--max-decisions",
        type=int,
        default=100_000,
        help="decision cap per game; capped games count as truncated (default 100000)",
    )
    p.add_argument(
        "--bootstrap", type=int, default=200, help="bootstrap resamples for rating intervals"
    )
    p.add_argument(
        "--no-plot",
        action="store_true",
        help="skip the heatmap PNG (skipped anyway, with a note, without matplotlib)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=cmd_arena)


# ---------------------------------------------------------------------------------------------
# exploit

_EXPLOIT_FLAGS = {
    "steps": "--steps",
    "seed": "--seed",
    "num_envs": "--num-envs",
    "num_steps": "--num-steps",
    "init": "--init",
    "hidden": "--hidden",
    "lr": "--lr",
    "ent_coef": "--ent-coef",
    "update_epochs": "--update-epochs",
    "num_minibatches": "--minibatches",
    "eval_deals": "--eval-deals",
    "snapshots": "--snapshots",
    "select_deals": "--select-deals",
    "workers": "--workers",
    "torch_threads": "--torch-threads",
    "out": "--out",
}
"""``rummy_agents.exploit`` settings set by a flag: an error about the setting names the flag."""


def _exploit_error(error: Exception) -> CLIError:
    """A ``ValueError``/``TypeError`` of ``rummy_agents.exploit`` as a CLI error naming the flag
    (the agent's own errors name the spec: ``--agent`` is put before them).
    """
    text = str(error)
    first = text.split(" ", 1)[0]
    if first in _EXPLOIT_FLAGS:
        return CLIError(_EXPLOIT_FLAGS[first] + text[len(first) :])
    if first in ("agent", "unknown", "bad", "checkpoint") or text.startswith("opponent="):
        return CLIError(f"--agent: {text}")
    return CLIError(text)


def cmd_exploit(args: argparse.Namespace) -> int:
    """Run ``rummy-env exploit``: every flag, the agent and the out folder are checked (and
    torch found) before training starts (:mod:`rummy_agents.exploit`, imported here).
    """
    try:
        import torch  # noqa: F401 - only whether it is installed
    except ImportError:
        raise CLIError(
            'exploit trains a network and needs torch: pip install -c constraints.txt -e ".[train]"'
        ) from None
    from rummy_agents import exploit as X

    if args.game not in GAMES:
        raise CLIError(f"unknown game {args.game!r}; available: {', '.join(GAMES)}")
    options = parse_options(args.option)
    if args.episode is not None:
        options["episode"] = args.episode
    make_config(args.game, options)
    settings = {
        "num_envs": args.num_envs,
        "num_steps": args.num_steps,
        "init": args.init,
        "hidden": args.hidden,
        "lr": args.lr,
        "ent_coef": args.ent_coef,
        "update_epochs": args.update_epochs,
        "num_minibatches": args.minibatches,
        "eval_deals": args.eval_deals,
        "snapshots": args.snapshots,
        "select_deals": args.select_deals,
        "workers": args.workers,
        "torch_threads": args.torch_threads,
    }
    try:
        cfg = X.ExploitConfig(args.game, args.agent, args.steps, args.seed, options, **settings)
        out = X.default_out(cfg.game, cfg.agent) if args.out is None else Path(args.out)
        check_out_dir(out)
        plan, out = X.prepare(cfg, out)
    except (ValueError, TypeError) as e:
        raise _exploit_error(e) from None
    for note in plan.notes:
        print(f"{PROG} exploit: note: {note}", file=sys.stderr)
    result = X.run(cfg, plan, out, progress=not args.no_progress, plot=not args.no_plot)
    s, ev = result.summary, result.summary["evaluation"]
    print(
        f"best response to {cfg.agent} at {cfg.game} ({s['trained_steps']:,} steps, init "
        f"{s['init']}, {s['train_steps_per_s']:,.0f} steps/s)"
    )
    sel = s["selection"]
    if sel is not None:
        ranks = ", ".join(f"{c['step']:,}: {100 * c['score_rate']:.1f}%" for c in sel["candidates"])
        print(
            f"validation, {sel['deals']} duplicate deals (seed {sel['seed']}), score % by step: "
            f"{ranks}; best response: the network of step {sel['chosen_step']:,}"
        )
    print(
        f"held-out evaluation, {ev['deals']} duplicate deals ({ev['games']} games, seed "
        f"{ev['seed']}): {ev['wins']} wins, {ev['losses']} losses, {ev['draws']} draws; win rate "
        f"{100 * ev['win_rate']:.1f}% [{100 * ev['win_lo']:.1f}, {100 * ev['win_hi']:.1f}]; mean "
        f"margin per game {ev['margin']:+.3f} [{ev['margin_lo']:+.3f}, {ev['margin_hi']:+.3f}]"
    )
    print(f"a lower bound on {cfg.agent}'s exploitability; reproduce the evaluation with:")
    print(f"  {ev['command']}")
    print(f"wrote {', '.join(str(p) for p in result.files)}")
    if not args.no_plot and out / X.CURVE_PNG not in result.files:
        print(f"{PROG}: note: no curve.png: it needs matplotlib (pip install 'rummy_env[plot]')",
              file=sys.stderr)  # fmt: skip
    return 0


def add_exploit_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``exploit`` command."""
    p = sub.add_parser(
        "exploit",
        help="train a best response to an agent and measure it (approximate exploitability)",
        description=(
            "Train a best response to a frozen agent (masked PPO on the single-agent vector "
            "env, the agent in every other seat), then play it against the agent on fresh "
            "duplicate deals with the arena: win rate with a Wilson interval and mean margin "
            "with a t interval. Writes curve.csv, curve.png, best_response.npz and "
            "summary.json. An approximate best response gives a lower bound on "
            "exploitability. Needs torch: pip install -c constraints.txt -e '.[train]'."
        ),
    )
    p.add_argument("--game", default="gin_rummy", help="game name (default gin_rummy)")
    p.add_argument(
        "--agent",
        required=True,
        help="the frozen agent's spec, name or name@key=value (e.g. simple, greedy, "
        "ppo, ppo@checkpoint=PATH, ismcts@iterations=100)",
    )
    p.add_argument("--steps", type=int, default=200_000,
                   help="learner decisions to train on (default 200000)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0,
                   help="training seed; the evaluation uses seed + 1, the validation "
                   "seed + 2 (default 0)")  # fmt: skip
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="rule option, repeatable (as in arena)")  # fmt: skip
    p.add_argument("--episode", choices=("hand", "match", "game"), default=None,
                   help="episode: one hand, or a Gin match / a 500 Rum game")  # fmt: skip
    p.add_argument("--init", default="auto",
                   help="network start: auto (the published agent where its layout fits, else "
                   "fresh), published, fresh (default auto)")  # fmt: skip
    p.add_argument("--num-envs", type=int, default=64, help="games stepped together (default 64)")
    p.add_argument("--num-steps", type=int, default=32,
                   help="decisions per game and PPO update (default 32)")  # fmt: skip
    p.add_argument("--hidden", type=int, default=128,
                   help="hidden width of a fresh network (default 128)")  # fmt: skip
    p.add_argument("--lr", type=float, default=3e-4,
                   help="learning rate, annealed to 0 (default 3e-4)")  # fmt: skip
    p.add_argument("--ent-coef", type=float, default=0.01,
                   help="entropy bonus weight (default 0.01)")  # fmt: skip
    p.add_argument("--update-epochs", type=int, default=4,
                   help="passes over each rollout (default 4)")  # fmt: skip
    p.add_argument("--minibatches", type=int, default=4,
                   help="minibatches per pass (default 4)")  # fmt: skip
    p.add_argument("--eval-deals", type=int, default=500,
                   help="duplicate deals of the held-out evaluation (default 500)")  # fmt: skip
    p.add_argument("--snapshots", type=int, default=4,
                   help="networks kept along the training besides the start, the last the "
                   "final one (default 4)")  # fmt: skip
    p.add_argument("--select-deals", type=int, default=200,
                   help="duplicate deals of the validation that picks the best of the start and "
                   "the snapshots; 0: the final network (default 200)")  # fmt: skip
    p.add_argument("--workers", type=int, default=1,
                   help="processes of the evaluation (default 1)")  # fmt: skip
    p.add_argument("--torch-threads", type=int, default=1,
                   help="torch CPU threads while training (default 1)")  # fmt: skip
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help=f"folder of the run's files (default ./{RUNS_DIR}/exploit_<game>_<agent>)",
    )
    p.add_argument("--no-plot", action="store_true", help="skip curve.png")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    p.set_defaults(func=cmd_exploit)


# ---------------------------------------------------------------------------------------------
# entry point

# ---------------------------------------------------------------------------------------------
# replay


def _path_error(e: Exception) -> str:
    """The reason a file operation failed, without the path (the message names it already)."""
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e)


def _shown_path(path: str) -> str:
    """A file name short enough for a one-line error."""
    return repr(path) if len(path) <= 160 else repr(f"{path[:100]}...{path[-50:]}")


def cmd_replay(args: argparse.Namespace) -> int:
    """Run ``rummy-env replay``: play a game record back through the env, checking every
    decision and the result, and print the table before each decision (or, with ``--html``,
    write a page of pictures to step through).

    Every failure is a :class:`CLIError` (one line): a record that cannot be read (missing, a
    folder, no permission, not UTF-8, too long a name) or is malformed, a replay that does not
    match, an ``--html`` file that cannot be written.
    """
    from rummy_env.game_records import read_record, replay

    try:
        record = read_record(args.file)
    except (TypeError, ValueError) as e:  # the message names the file, the line and the field
        raise CLIError(str(e)) from None
    if args.view is not None and args.view not in record.agents:
        raise CLIError(f"--view must be one of {', '.join(record.agents)}, got {args.view!r}")
    if args.html is not None:
        return _replay_html(args, record)
    shown = {"n": 0}

    def show(env: Any, i: int, agent: str, action: int) -> None:
        if args.quiet:
            return
        if shown["n"]:
            print()
        shown["n"] += 1
        print(env.render_text())
        if agent:
            label = record.labels.get(agent, "")
            who = f"{agent} ({label})" if label else agent
            print(f"-- step {i}: {who} plays {env.action_name(action)}")

    try:
        res = replay(record, on_step=show)
    except (TypeError, ValueError) as e:
        raise CLIError(f"{args.file}: {e}") from None
    returns = ", ".join(f"{a} {r:+g}" for a, r in res.returns.items())
    state = "finished" if res.finished else "unfinished"
    print(f"\n{record.game}, {res.steps} decisions, {state}; outcome {res.outcome}; {returns}")
    if res.matches:
        print("the replay matches the record's result")
    else:
        print("the record has no result to compare with")
    return 0


def _replay_html(args: argparse.Namespace, record: Any) -> int:
    """``rummy-env replay FILE --html OUT``: the page of the checked replay, written to OUT (the
    folder is checked before the replay, the file's own errors when it is written).
    """
    from rummy_env.render.html import record_page

    name = _shown_path(args.html)
    out = Path(args.html)
    try:
        if out.is_dir():
            raise CLIError(f"--html: {name} is a folder; give the page's file name")
        if not out.parent.is_dir():
            raise CLIError(f"--html: folder {_shown_path(str(out.parent))} does not exist")
    except (OSError, ValueError) as e:  # too long a name, a NUL character
        raise CLIError(f"--html: cannot write {name}: {_path_error(e)}") from None
    try:
        page, res = record_page(record, args.view)
    except (TypeError, ValueError) as e:
        raise CLIError(f"{args.file}: {e}") from None
    try:
        out.write_text(page, encoding="utf-8")
    except (OSError, ValueError) as e:
        raise CLIError(f"--html: cannot write {name}: {_path_error(e)}") from None
    print(f"wrote {out} ({res.steps} decisions, {res.steps + 1} pictures)")
    return 0


def add_replay_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``replay`` command."""
    p = sub.add_parser(
        "replay",
        help="play a game record back through the env, checking it, and print the table",
        description=(
            "Replay a game record (rummy-env arena --record, rummy_env.game_records) through "
            "the env of its game: every decision must be the right player's and legal, and the "
            "returns and outcome must match the record's. Prints the table before each "
            "decision (the referee's view) and the result; --html writes a self-contained "
            "page of pictures of the table to step through instead."
        ),
    )
    p.add_argument("file", help="a record (.jsonl)")
    p.add_argument(
        "--quiet", action="store_true", help="check only; print the result, not the table"
    )
    p.add_argument(
        "--html",
        metavar="OUT",
        help="write a self-contained HTML page (a picture per decision, arrow keys to step)",
    )
    p.add_argument(
        "--view",
        metavar="AGENT",
        help="with --html: one seat's view (player_0, ...) instead of the referee's",
    )
    p.set_defaults(func=cmd_replay)


def add_play_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``play`` command (:mod:`rummy_agents.terminal`, which imports this module)."""
    from rummy_agents.terminal import add_play_parser as add

    add(sub)


def add_serve_parser(sub: argparse._SubParsersAction) -> None:
    """Register the ``serve`` command (:mod:`rummy_agents.web`; the app's own dependencies,
    starlette and uvicorn, are imported only when it runs).
    """
    from rummy_agents.web import add_serve_parser as add

    add(sub)


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_simulate_parser,
    add_arena_parser,
    add_exploit_parser,
    add_replay_parser,
    add_play_parser,
    add_serve_parser,
]
"""Functions adding one subcommand each (set ``func`` to the command's handler)."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are :class:`CLIError`: one line, no usage dump."""

    def error(self, message: str) -> NoReturn:
        """Raise the usage error as a :class:`CLIError` (``main`` prints it as one line)."""
        raise CLIError(f"{message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered subcommand."""
    from rummy_env import __version__

    parser = _Parser(prog=PROG, description="Rummy card game environments.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status: 0, or 2 for a user error (a bad flag, option,
    agent, number or folder), printed as one line ``rummy-env: error: ...`` on stderr before
    any game is played. ``--help`` and ``--version`` exit (``SystemExit(0)``) as usual.
    """
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except CLIError as e:
        print(f"{PROG}: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    # run through the package module, not this __main__ copy: the commands' modules import
    # rummy_agents.cli, and their CLIError must be the one main() catches
    from rummy_agents.cli import main as _main

    sys.exit(_main())
