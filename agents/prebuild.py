"""Write the prebuilt kernels (``rummy_env.core.prebuilt``) into the packages' ``_prebuilt``
folders: ``python -m rummy_agents.prebuild``. The install runs it from a checkout (``pip install
-e .`` and ``pip wheel .``, through setup.py, with ``--if-stale``), so a checkout's first steps
load their kernels instead of compiling them; ``.ci/wheel`` runs it before building the wheel.

It runs ``warm_up`` (the calls a new user makes first) with an empty numba cache, one process
per game side by side, compiling for ``PREBUILT_CPU`` and saving every kernel to the tier; then
again from the tier alone, keeping only the entries those runs loaded (the functions Python
calls: the callees are compiled into them) and recording anything they still compiled (should
be nothing). Each package's manifest records the sources' digest, numba and Python: with
``--if-stale`` a tier that matches is kept.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rummy_env.core.prebuilt import (
    BUILD_ENV,
    FOLDER,
    HOST,
    LOADED,
    MANIFEST,
    OFF_ENV,
    PREBUILT_CPU,
    REQUIRED_FEATURES,
    building,
    building_for_host,
    host_supported,
)

GAMES = ("rummy51", "five_hundred_rum", "gin_rummy")
"""The parts of ``warm_up`` the build compiles side by side, the slowest first."""


def warm_up(games: tuple[str, ...] = GAMES) -> None:
    """Make the calls a new user makes first, so that every kernel they reach is compiled (and,
    in the build process, saved to the tier): each game's AEC env played for a few hands with
    its observations, its vector env stepped, its Gymnasium env (one learner against the
    game's rule-based agent) and native vector env stepped, and the arena's batches of the
    README's main job and of each game's published agent.

    Args:
        games: the games to warm up (the build runs one process per game).
    """
    import gymnasium  # noqa: PLC0415
    import numpy as np  # noqa: PLC0415
    from numba.core import config  # noqa: PLC0415

    import rummy_env  # noqa: PLC0415
    from rummy_env.rules.base import PARALLEL_MIN_BATCH, WARMUP_CALLS  # noqa: PLC0415

    # numba's config sets its attributes from the environment, out of its stubs' sight
    cpu = (config.CPU_NAME, config.CPU_FEATURES)  # type: ignore[attr-defined]
    if building() and not building_for_host() and cpu != (PREBUILT_CPU, ""):
        raise RuntimeError(f"the tier is built with NUMBA_CPU_NAME={PREBUILT_CPU} and no features")
    if building_for_host() and cpu != (None, None):
        raise RuntimeError("a tier for the host is built without NUMBA_CPU_NAME or _FEATURES")

    cases = [
        (game, options)
        for game, options in [
            ("gin_rummy", {}),
            ("gin_rummy", {"num_players": 3}),
            ("gin_rummy", {"num_players": 4}),
            ("five_hundred_rum", {}),
            ("rummy51", {}),
        ]
        if game in games
    ]
    rng = np.random.default_rng(0)
    for game, options in cases:
        env = rummy_env.ENV_MODULES[game].env(**options)
        env.reset(seed=0)
        for _ in range(600):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                if not env.agents:
                    env.reset()
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        env.close()
        # below and at the batch size the threaded step kernel joins the serial one
        for num_envs in (8, PARALLEL_MIN_BATCH):
            venv = rummy_env.make_vec(game, num_envs, seed=0, **options)
            obs, _ = venv.reset()
            for _ in range(30):
                mask = obs["action_mask"]
                obs, *_ = venv.step((rng.random(mask.shape) * mask).argmax(1))
    for gym_id in (i for i, game in rummy_env.GYM_IDS.items() if game in games):
        genv = gymnasium.make(gym_id)
        _, info = genv.reset(seed=0)
        for _ in range(100):
            mask = genv.unwrapped.action_masks()  # type: ignore[attr-defined]  # RummySingleAgentEnv
            _, _, term, trunc, info = genv.step(int(rng.choice(np.flatnonzero(mask))))
            if term or trunc:
                genv.reset()
        # at the batch size the threaded opponent loop joins the serial one; the steps cover
        # the threaded kernel's warm-up and a trial of both (FastestStep)
        for num_envs in (4, PARALLEL_MIN_BATCH):
            vec = gymnasium.make_vec(gym_id, num_envs=num_envs)
            _, info = vec.reset(seed=0)
            for _ in range(WARMUP_CALLS + 30):
                masks = info["action_mask"]
                _, _, _, _, info = vec.step((rng.random(masks.shape) * masks).argmax(1))
    if "gin_rummy" in games:
        # the Gin rule agents' batch kernel (the vector envs above decide in their own loops)
        from rummy_agents.gin_rummy_rules import GinRummySimpleAgent  # noqa: PLC0415

        obs, _ = rummy_env.make_vec("gin_rummy", 8, seed=0).reset()
        GinRummySimpleAgent(seed=0).act_batch(obs["observation"], obs["action_mask"])
    # the arena's batches (rummy_agents.arena.batch): the README's main job, and each game's
    # published agent against its rule agent
    from rummy_agents.arena import ArenaSpec, run_arena  # noqa: PLC0415
    from rummy_agents.cli import BASELINES  # noqa: PLC0415

    for game, names in BASELINES.items():
        if game not in games:
            continue
        for pair in (tuple(names.split(",")), ("ppo", names.split(",")[-1])):
            run_arena(ArenaSpec(game, pair, deals=2, bootstrap=0), progress=False)


def verify(out: str, games: tuple[str, ...] = GAMES) -> None:
    """Run ``warm_up(games)`` from the tier (numba's cache empty) and write to ``out`` the
    entries it loaded and the functions it still compiled.
    """
    from rummy_env.core.jit import record_compiles  # noqa: PLC0415

    compiled: list[str] = []
    record_compiles(compiled)
    warm_up(games)
    Path(out).write_text(json.dumps({"loaded": LOADED, "compiled": compiled}))


def _run_parts(code: str, env: dict[str, str], jobs: int, verbose: bool) -> None:
    """Run ``code`` (formatted with ``game``) once per game of ``GAMES`` in fresh
    processes, at most ``jobs`` at once, each with its own empty numba cache.

    Raises:
        RuntimeError: when a process fails.
    """
    with tempfile.TemporaryDirectory() as tmp:
        waiting = list(GAMES)
        running: list[tuple[str, float, subprocess.Popen[bytes]]] = []
        failed: list[str] = []
        while waiting or running:
            while waiting and len(running) < jobs:
                game = waiting.pop(0)
                cache = Path(tmp) / game
                cache.mkdir()
                part_env = dict(env, NUMBA_CACHE_DIR=str(cache))
                command = [sys.executable, "-c", code.format(game=game)]
                proc = subprocess.Popen(command, env=part_env)
                running.append((game, time.perf_counter(), proc))
            time.sleep(0.2)
            for item in list(running):
                game, t0, proc = item
                if proc.poll() is None:
                    continue
                running.remove(item)
                if proc.returncode:
                    failed.append(f"{game} (exit {proc.returncode})")
                elif verbose:
                    took = time.perf_counter() - t0
                    print(f"prebuild: {game} done in {took:.0f} s", file=sys.stderr, flush=True)
        if failed:
            raise RuntimeError(f"prebuild failed: {', '.join(failed)}")


def prune(folder: Path, keep: set[tuple[str, str]]) -> None:
    """Keep in ``folder``'s index files only the entries in ``keep`` (index path, data file
    name), and only their data files: the functions Python calls, not their compiled callees.
    """
    import pickle  # noqa: PLC0415

    for lock in folder.rglob(".lock"):  # PrebuiltTier.save's
        lock.unlink()
    for index in folder.rglob("*.nbi"):
        with open(index, "rb") as f:
            version = pickle.load(f)
            stamp, overloads = pickle.loads(f.read())
        kept = {k: v for k, v in overloads.items() if (str(index), v) in keep}
        for name in set(overloads.values()) - set(kept.values()):
            (index.parent / name).unlink(missing_ok=True)
        if kept:
            with open(index, "wb") as f:
                pickle.dump(version, f, protocol=-1)
                f.write(pickle.dumps((stamp, kept), protocol=-1))
        else:
            index.unlink()


def _package_roots() -> list[Path]:
    import rummy_agents  # noqa: PLC0415
    import rummy_env  # noqa: PLC0415

    return [Path(rummy_env.__file__).parent, Path(rummy_agents.__file__).parent]


def _digests() -> dict[Path, str]:
    """The kernel-source digest of each package folder (``_package_roots``)."""
    from rummy_env.core import jitcache  # noqa: PLC0415

    roots = _package_roots()  # imports both packages: their digests are computed then
    found = jitcache.package_digests()
    return {root: found.get(root, "") for root in roots}


CPUS = ("portable", "host")
"""What the tier is compiled for: ``PREBUILT_CPU`` (a wheel's, for any x86-64-v3 machine) or
this machine's CPU (a checkout's install)."""


def cpu_label(cpu: str) -> str:
    """The manifest's ``cpu`` of a tier built for ``cpu`` (one of ``CPUS``): ``PREBUILT_CPU``,
    or ``host <LLVM CPU name> <digest of its features>``, as numba's own cache tells hosts apart.
    """
    if cpu not in CPUS:
        raise ValueError(f"cpu must be one of {', '.join(CPUS)}, got {cpu!r}")
    if cpu == "portable":
        return PREBUILT_CPU
    import hashlib  # noqa: PLC0415

    import llvmlite.binding as ll  # noqa: PLC0415 - numba's

    features = ll.get_host_cpu_features().flatten()
    return f"host {ll.get_host_cpu_name()} {hashlib.sha256(features.encode()).hexdigest()[:12]}"


def current(cpu: str = "portable") -> bool:
    """Is the tier of both packages built from these sources, for this numba and Python and for
    ``cpu`` (``CPUS``), with nothing left to compile (``build``'s manifests)?
    """
    import numba  # noqa: PLC0415

    label = cpu_label(cpu)

    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    for root, digest in _digests().items():
        try:
            manifest = json.loads((root / FOLDER / MANIFEST).read_text())
        except (OSError, ValueError):
            return False
        if (
            not digest
            or manifest.get("digest") != digest
            or manifest.get("numba") != numba.__version__
            or manifest.get("python") != version
            or manifest.get("compiled_after")
            or manifest.get("cpu") != label
        ):
            return False
    return True


def build(verbose: bool = True, jobs: int = 2, cpu: str = "portable") -> dict[str, Any]:
    """Write the tier of ``rummy_env`` and ``rummy_agents`` (replacing any there): run
    ``warm_up`` with an empty numba cache, compiling for ``cpu``, one process per game and
    ``jobs`` at once (entries the games share are saved once; ``PrebuiltTier.save`` locks the
    index).

    Args:
        verbose: print each game's time and the tier's size.
        jobs: processes at once (each compiles one game's kernels).
        cpu: ``"portable"`` (``PREBUILT_CPU``: a wheel's) or ``"host"`` (this machine's: a
            checkout's install).

    Returns the manifest written beside each tier (sizes, time taken, versions, digest).

    Raises:
        RuntimeError: on a host that cannot run the code it would build (not
            ``PREBUILT_CPU``), or when a build process fails.
    """
    if not host_supported():
        raise RuntimeError(
            f"prebuilt kernels are built on an x86-64 host with {', '.join(REQUIRED_FEATURES)}"
        )
    if os.name != "posix":
        jobs = 1  # PrebuiltTier.save locks with fcntl
    digests = _digests()
    roots = list(digests)
    for root in roots:
        shutil.rmtree(root / FOLDER, ignore_errors=True)
    label = cpu_label(cpu)
    env = dict(os.environ, **{OFF_ENV: "1"})
    if cpu == "host":
        env[BUILD_ENV] = HOST
        env.pop("NUMBA_CPU_NAME", None)
        env.pop("NUMBA_CPU_FEATURES", None)
    else:
        env.update({BUILD_ENV: "1", "NUMBA_CPU_NAME": PREBUILT_CPU, "NUMBA_CPU_FEATURES": ""})
    t0 = time.perf_counter()
    code = "from rummy_agents.prebuild import warm_up; warm_up(({game!r},))"
    _run_parts(code, env, jobs, verbose)
    build_s = time.perf_counter() - t0
    # again from the tier alone: what it loaded is what Python calls; the rest (the callees
    # compiled into those entries) is dropped
    env = dict(os.environ)
    env.pop(BUILD_ENV, None)
    env.pop(OFF_ENV, None)
    loaded: list[tuple[str, str]] = []
    compiled: list[str] = []
    with tempfile.TemporaryDirectory() as reports:
        env["RUMMY_ENV_PREBUILD_REPORTS"] = reports
        code = (
            "import os; from rummy_agents.prebuild import verify; "
            "verify(os.path.join(os.environ['RUMMY_ENV_PREBUILD_REPORTS'], {game!r} + '.json'), "
            "({game!r},))"
        )
        _run_parts(code, env, jobs, verbose=False)
        for game in GAMES:
            report = json.loads((Path(reports) / f"{game}.json").read_text())
            loaded += [(i, d) for i, d in report["loaded"]]
            compiled += report["compiled"]
    keep = set(loaded)
    for root in roots:
        if (root / FOLDER).is_dir():
            prune(root / FOLDER, keep)
    import numba  # noqa: PLC0415

    manifest: dict[str, Any] = {
        "cpu": label,
        "numba": numba.__version__,
        "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "build_seconds": round(build_s, 1),
        "compiled_after": sorted(set(compiled)),
    }
    for root in roots:
        folder = root / FOLDER
        files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
        info = dict(
            manifest,
            digest=digests[root],
            files=len(files),
            bytes=sum(p.stat().st_size for p in files),
        )
        if files:
            (folder / MANIFEST).write_text(json.dumps(info, indent=1) + "\n")
        if verbose:
            print(f"{folder.resolve()}: {info['files']} files, {info['bytes'] / 1e6:.1f} MB")
    if verbose:
        print(
            f"built in {build_s:.0f} s; still compiled when loading: {manifest['compiled_after']}"
        )
    return manifest


def main(argv: list[str] | None = None) -> int:
    """``python -m rummy_agents.prebuild``: write the prebuilt tier into the packages."""
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(
        prog="python -m rummy_agents.prebuild",
        description="Write the prebuilt kernels (rummy_env.core.prebuilt) into the packages' "
        "_prebuilt folders: each game's first steps then load them instead of compiling. "
        "The install from a checkout runs it (setup.py); .ci/wheel runs it before the wheel.",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=max(1, min(len(GAMES), os.cpu_count() or 1)),
        help="processes at once, one game each (default: the cores, at most 3)",
    )
    parser.add_argument(
        "--cpu",
        choices=CPUS,
        default="portable",
        help=f"compile for {PREBUILT_CPU}, to ship in a wheel (portable, the default), or for "
        "this machine's CPU (host: a checkout's install)",
    )
    parser.add_argument(
        "--if-stale",
        action="store_true",
        help="do nothing when the tier is already built from these sources, numba and Python",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.if_stale and current(args.cpu):
        print("prebuild: the prebuilt kernels are up to date", file=sys.stderr)
        return 0
    if not host_supported():
        print(
            "prebuild: skipped: prebuilt kernels run on x86-64 with "
            f"{', '.join(REQUIRED_FEATURES)}; this host compiles at first use",
            file=sys.stderr,
        )
        return 0
    print(
        f"prebuild: compiling the kernels of {', '.join(GAMES)} for {cpu_label(args.cpu)}, "
        f"{args.jobs} at once, into the packages' {FOLDER} folders (once; about 3-9 min on "
        "2 cores)",
        file=sys.stderr,
        flush=True,
    )
    build(jobs=args.jobs, cpu=args.cpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
