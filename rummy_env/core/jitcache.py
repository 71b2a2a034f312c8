"""Drop a package's numba caches when any of its kernel sources changed.

numba checks a cached function against its own source file only. A cached entry point of
``core/batch.py`` has the game hooks it calls (in ``rules/*/kernels.py``) compiled in, and a
game kernel the helpers of ``core/melds.py`` and others: edit one of those and numba would
keep loading the old machine code. So, at import and before any kernel loads, the package
hashes the sources of its kernel folders; when the digest differs from the one stored beside
the caches, it deletes the caches (``*.nbi``, ``*.nbc``) of those folders and stores the new
digest. Hashing some 30 files takes about a millisecond.

Tolerant by design: a folder whose cache cannot be written (a read-only install) is skipped,
and processes starting together may both clean (harmless; one of them writes the digest). A
process that loaded old kernels before an edit and compiles a new specialisation afterwards
can still store old code: restart long-running jobs after editing kernels.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

DIGEST_FILE = "jit_sources.sha256"
CACHE_SUFFIXES = (".nbi", ".nbc")


def source_digest(folders: Iterable[Path], extra: str = "") -> str:
    """SHA-256 of every ``.py`` file under ``folders`` (paths relative to each folder, after
    the folder's position in the list, and contents, in a fixed order) and of ``extra`` (e.g.
    the digest of a package depended on). The folders' own names are left out: the agents'
    folder is ``agents`` in a checkout and ``rummy_agents`` once installed, and a wheel's
    prebuilt kernels (``core.prebuilt``, stamped with this digest) must match both.
    """
    h = hashlib.sha256(extra.encode())
    for k, folder in enumerate(folders):
        folder = Path(folder)
        for path in sorted(folder.rglob("*.py")):
            h.update(f"{k}/{path.relative_to(folder).as_posix()}".encode())
            h.update(b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()


def cache_dir(source_folder: Path) -> Path | None:
    """Where numba caches the functions of modules in ``source_folder``: its ``__pycache__``
    when writable, else numba's user-wide (or ``NUMBA_CACHE_DIR``) mirror; None if neither.
    """
    try:
        from numba.core import caching, config  # noqa: PLC0415 - numba is slow to import

        probe = source_folder / "__init__.py"
        if not probe.exists():
            probe = next(iter(sorted(source_folder.glob("*.py"))), probe)
        locators = [caching.InTreeCacheLocator, caching.UserWideCacheLocator]
        if config.CACHE_DIR:  # type: ignore[attr-defined]  # set from the environment
            locators.insert(0, caching.UserProvidedCacheLocator)
        for cls in locators:
            loc = cls.from_function(_probe, str(probe))
            if loc is not None:
                return Path(loc.get_cache_path())
    except (ImportError, AttributeError, OSError, StopIteration):  # numba internals moved
        pass
    d = source_folder / "__pycache__"
    return d if os.access(d if d.exists() else source_folder, os.W_OK) else None


def _probe() -> None:
    """A function for numba's cache locators, which read only its line number."""


def clean_stale(root: Path, folders: Iterable[Path], extra: str = "") -> str:
    """Delete the numba caches of every folder (and subfolder) in ``folders`` if their sources'
    digest differs from the one stored for ``root``; returns the digest.
    """
    folders = [Path(f) for f in folders]
    digest = source_digest(folders, extra)
    root_cache = cache_dir(Path(root))
    if root_cache is None:
        return digest
    stamp = root_cache / DIGEST_FILE
    try:
        if stamp.read_text().strip() == digest:
            return digest
    except OSError:
        pass
    dirs = {Path(sub) for f in folders for sub, _, _ in os.walk(f) if "__pycache__" not in sub}
    for sub in sorted(dirs):
        d = cache_dir(sub)
        if d is None or not d.is_dir():
            continue
        for entry in d.iterdir():
            if entry.suffix in CACHE_SUFFIXES:
                try:
                    entry.unlink()
                except OSError:  # gone already (another process) or not ours to delete
                    pass
    try:
        root_cache.mkdir(parents=True, exist_ok=True)
        tmp = root_cache / f"{DIGEST_FILE}.{os.getpid()}"
        tmp.write_text(digest + "\n")
        os.replace(tmp, stamp)
    except OSError:
        pass
    return digest


def ensure_fresh() -> str:
    """Clean stale caches of ``rummy_env``'s kernel folders (``core``, ``rules``,
    ``encodings``); returns their digest. Called by ``rummy_env/__init__.py`` first thing.
    """
    # the path as imported (not resolved): numba locates caches from it
    pkg = Path(os.path.abspath(__file__)).parent.parent
    key = str(pkg)
    if key not in _digests:
        _digests[key] = clean_stale(pkg, [pkg / "core", pkg / "rules", pkg / "encodings"])
    return _digests[key]


def ensure_fresh_dependent(folder: Path) -> str:
    """Clean stale caches of a package in ``folder`` (all of it) whose kernels call
    ``rummy_env``'s: its digest covers ``rummy_env``'s too. Returns the digest.
    """
    folder = Path(os.path.abspath(folder))
    key = str(folder)
    if key not in _digests:
        _digests[key] = clean_stale(folder, [folder], extra=ensure_fresh())
    return _digests[key]


def package_digests() -> dict[Path, str]:
    """The kernel-source digest of each package folder computed in this process (``rummy_env``
    and each dependent package), by folder.
    """
    return {Path(key): digest for key, digest in _digests.items()}


_digests: dict[str, str] = {}  # per package folder (as imported), once per process

__all__ = [
    "cache_dir",
    "clean_stale",
    "ensure_fresh",
    "ensure_fresh_dependent",
    "package_digests",
    "source_digest",
]
