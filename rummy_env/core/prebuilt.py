"""Prebuilt kernels: machine code compiled at install (a checkout's ``pip install -e .``) or
when the wheel is built, so that a fresh environment's first step loads its kernels instead of
compiling them (16-53 s per game on the 2-core development machine).

Every ``@kernel`` is cached on disk by numba (``core.jit``), but that cache starts empty on each
new machine, virtual environment or CI job. The packages may carry a second, read-only tier:
``<package>/_prebuilt/``, numba cache files (``.nbi`` index, ``.nbc`` data) written by
``python -m rummy_agents.prebuild`` for the calls a user makes first (each game's AEC env,
vector env and Gymnasium env at their default options, Gin also for 3 and 4 players; see
``rummy_agents.prebuild.warm_up``). A kernel that misses numba's own cache looks there before
it compiles; what it loads from the tier is not copied into numba's cache.

What keeps a prebuilt kernel correct:

- **Sources**: an index entry is stamped with the digest of its package's kernel sources
  (``core.jitcache``) and of its own file. Any edit misses, and the kernel compiles as before.
- **Machine**: a wheel's code is compiled for ``PREBUILT_CPU`` (``x86-64-v3``: AVX2, BMI1/2,
  LZCNT, POPCNT; Intel since Haswell, 2013, AMD since Excavator/Zen) with no extra features,
  and is used only on an x86-64 host that has them (``host_supported``). A checkout's install
  compiles for its own CPU (``BUILD_ENV=host``): those entries are indexed under the host's
  CPU name and features, as numba's own cache is, so another machine misses them. Other
  machines compile as before. (``x86-64-v2`` code, tried first, stepped slower here in Gin and
  500 Rum.)
- **numba and Python**: numba's index header holds its version and the file names the Python
  version; a mismatch misses.

The code is the same code (same sources, same numba passes). A wheel's, built for a baseline
CPU instead of the host's, stepped within noise of, or up to about 10% below, code compiled for
the host (a Zen 3 here): for the last few percent of a long training run from a wheel, run once
with ``RUMMY_ENV_PREBUILT=0`` (the tier off): numba then compiles for the host and caches it,
and its own cache is looked up first from then on.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

PREBUILT_CPU = "x86-64-v3"
"""The CPU the prebuilt code is compiled for (an LLVM CPU name)."""

REQUIRED_FEATURES = (
    *("avx", "avx2", "bmi", "bmi2", "cx16", "f16c", "fma", "lzcnt", "movbe", "popcnt"),
    *("sahf", "sse3", "sse4.1", "sse4.2", "ssse3", "xsave"),
)
"""What ``PREBUILT_CPU`` may use beyond x86-64: a host lacking one compiles instead."""

FOLDER = "_prebuilt"
"""The tier's folder inside each package that has kernels (``rummy_env``, ``rummy_agents``)."""

BUILD_ENV = "RUMMY_ENV_PREBUILD"
"""Set (to 1) in the process that writes the tier: kernels then save to and load from it."""

OFF_ENV = "RUMMY_ENV_PREBUILT"
"""Set to 0 to ignore the tier."""

MANIFEST = "manifest.json"


HOST = "host"
"""``BUILD_ENV``'s value when the tier is built for this machine's CPU (a checkout's install)
rather than for ``PREBUILT_CPU`` (a wheel's)."""


def building() -> bool:
    """True in the process that writes the tier (``BUILD_ENV`` set)."""
    return os.environ.get(BUILD_ENV, "") not in ("", "0")


def building_for_host() -> bool:
    """True in the process that writes a tier for this machine's CPU (``BUILD_ENV=host``)."""
    return os.environ.get(BUILD_ENV, "") == HOST


def _off() -> bool:
    return os.environ.get(OFF_ENV, "1") == "0"


_host_ok: bool | None = None


def host_supported() -> bool:
    """Can this machine run code built for ``PREBUILT_CPU`` (x86-64 with its features)?"""
    global _host_ok
    if _host_ok is None:
        try:
            import llvmlite.binding as ll  # noqa: PLC0415 - numba's, imported with it

            features = ll.get_host_cpu_features()
            _host_ok = ll.get_process_triple().startswith("x86_64") and all(
                features.get(f, False) for f in REQUIRED_FEATURES
            )
        except Exception:  # noqa: BLE001 - an unknown host compiles, as without the tier
            _host_ok = False
    return _host_ok


def magic_tuple(codegen: Any) -> tuple[str, str, str]:
    """The codegen description prebuilt entries are indexed under (numba's ``magic_tuple``:
    target triple, CPU name, CPU features) for the host's triple.
    """
    return (codegen.magic_tuple()[0], PREBUILT_CPU, "")


def _file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def stamp_and_folder(source_file: str) -> tuple[str, Path] | None:
    """The tier's stamp and folder for a kernel defined in ``source_file``: None when the file
    is in no package whose kernel digest ``core.jitcache`` has computed in this process.
    """
    from rummy_env.core import jitcache  # noqa: PLC0415 - imported by rummy_env first

    path = Path(os.path.abspath(source_file))
    for root, digest in jitcache.package_digests().items():
        try:
            rel = path.parent.relative_to(root)
        except ValueError:
            continue
        stamp = hashlib.sha256(f"{digest}:{_file_digest(str(path))}".encode()).hexdigest()
        return stamp, root / FOLDER / rel
    return None


LOADED: list[tuple[str, str]] = []
"""(index file, data file) of every entry this process loaded from a tier."""


class PrebuiltTier:
    """The prebuilt entries of one kernel: numba's index and data files in the tier's folder,
    stamped with the sources' digest instead of numba's per-file stamp.
    """

    def __init__(self, folder: Path, filename_base: str, stamp: str) -> None:
        from numba.core.caching import IndexDataCacheFile  # noqa: PLC0415 - numba is slow

        self.folder = folder
        self.file = IndexDataCacheFile(
            cache_path=str(folder), filename_base=filename_base, source_stamp=stamp
        )

    @classmethod
    def for_function(cls, py_func: Any, filename_base: str) -> PrebuiltTier | None:
        """The tier of ``py_func``'s kernel, or None when it has none here (the tier is off,
        the host cannot run it, or the function is in no package with kernels).
        """
        if _off() or not (building() or host_supported()):
            return None
        try:
            found = stamp_and_folder(py_func.__code__.co_filename)
        except OSError:
            return None
        if found is None:
            return None
        stamp, folder = found
        if not building() and not (folder / f"{filename_base}.nbi").exists():
            return None
        return cls(folder, filename_base, stamp)

    def load(self, key: Any) -> Any:
        """The reduced compile result stored under ``key``, or None."""
        name = self.file._load_index().get(key)
        if name is None:
            return None
        LOADED.append((self.file._index_path, name))
        return self.file._load_data(name)

    def save(self, key: Any, data: Any) -> None:
        """Store a reduced compile result under ``key`` (the build processes only: they run
        side by side, one game each, so the read-modify-write of the index is locked).
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "a") as lock:
            try:
                import fcntl  # noqa: PLC0415 - POSIX; the tier is built on x86-64 Linux/macOS

                fcntl.flock(lock, fcntl.LOCK_EX)
            except ImportError:  # pragma: no cover - elsewhere the build runs one process
                pass
            self.file.save(key, data)
