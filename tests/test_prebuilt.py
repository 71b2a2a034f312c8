"""The prebuilt kernel tier (``rummy_env.core.prebuilt``): a kernel built into a package's
``_prebuilt`` folder loads in a fresh process with an empty numba cache instead of compiling,
gives the same results, and is ignored when its sources change, when the tier is turned off,
and after pruning for the functions no one called from Python.

Each case runs a tiny package of kernels (a dependent of ``rummy_env``, as ``rummy_agents`` is)
in fresh interpreters, counting numba compile events.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rummy_agents.prebuild import prune
from rummy_env.core import prebuilt

pytestmark = pytest.mark.skipif(
    not prebuilt.host_supported(), reason=f"host cannot run {prebuilt.PREBUILT_CPU} code"
)

INIT = """
from pathlib import Path
from rummy_env.core import jitcache
jitcache.ensure_fresh_dependent(Path(__file__).parent)
from tierpkg.k import double
"""

KERNELS = """
from rummy_env.core.jit import kernel

@kernel
def inner(x):
    return x * {factor}

@kernel
def double(x):
    return inner(x) + 0
"""

RUN = """
import json, sys
from rummy_env.core.jit import record_compiles
compiled = []
record_compiles(compiled, "tierpkg.")  # not rummy_env's own
import tierpkg
from rummy_env.core import prebuilt
value = int(tierpkg.double(21))
loaded = [e for e in prebuilt.LOADED if "tierpkg" in e[0]]  # not rummy_env's own
compiled = [name.rsplit(".", 1)[1] for name in compiled]
print(json.dumps({"value": value, "compiled": compiled, "loaded": loaded}))
"""


def make_package(root: Path, factor: int = 2) -> Path:
    pkg = root / "tierpkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "k.py").write_text(KERNELS.format(factor=factor))
    return pkg


def run(root: Path, cache: Path, **extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache), **extra)
    for name in (prebuilt.BUILD_ENV, prebuilt.OFF_ENV, "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
        if name not in extra:
            env.pop(name, None)
    out = subprocess.run(
        [sys.executable, "-c", RUN], env=env, cwd=root, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def build(root: Path, tmp: Path) -> dict:
    return run(
        root,
        tmp / "build-cache",
        **{
            prebuilt.BUILD_ENV: "1",
            "NUMBA_CPU_NAME": prebuilt.PREBUILT_CPU,
            "NUMBA_CPU_FEATURES": "",
        },
    )


def test_a_built_kernel_loads_without_compiling(tmp_path: Path) -> None:
    pkg = make_package(tmp_path)
    built = build(tmp_path, tmp_path)
    assert built["value"] == 42
    assert sorted(built["compiled"]) == ["double", "inner"]
    assert list((pkg / prebuilt.FOLDER).glob("k.double-*.nbi"))

    fresh = run(tmp_path, tmp_path / "cache-1")
    assert fresh == {"value": 42, "compiled": [], "loaded": fresh["loaded"]}
    assert len(fresh["loaded"]) == 1 and "k.double" in fresh["loaded"][0][0]

    # turned off: compiles into numba's own cache as without the tier
    off = run(tmp_path, tmp_path / "cache-2", **{prebuilt.OFF_ENV: "0"})
    assert off["value"] == 42 and sorted(off["compiled"]) == ["double", "inner"]
    assert off["loaded"] == []


def test_a_tier_built_for_the_host_loads_without_compiling(tmp_path: Path) -> None:
    """A checkout's install builds for its own CPU (``BUILD_ENV=host``): indexed as numba's own
    cache is, and loaded in a fresh process with an empty cache.
    """
    pkg = make_package(tmp_path)
    built = run(tmp_path, tmp_path / "build-cache", **{prebuilt.BUILD_ENV: prebuilt.HOST})
    assert built["value"] == 42 and sorted(built["compiled"]) == ["double", "inner"]
    assert list((pkg / prebuilt.FOLDER).glob("k.double-*.nbi"))
    fresh = run(tmp_path, tmp_path / "cache-1")
    assert fresh["value"] == 42 and fresh["compiled"] == [] and len(fresh["loaded"]) == 1


def test_pruning_keeps_what_python_called(tmp_path: Path) -> None:
    pkg = make_package(tmp_path)
    build(tmp_path, tmp_path)
    assert len(list((pkg / prebuilt.FOLDER).glob("*.nbi"))) == 2
    fresh = run(tmp_path, tmp_path / "cache-1")
    prune(pkg / prebuilt.FOLDER, {tuple(e) for e in fresh["loaded"]})
    left = sorted(p.name.split("-")[0] for p in (pkg / prebuilt.FOLDER).iterdir())
    assert left == ["k.double", "k.double"]  # its index and its one data file
    again = run(tmp_path, tmp_path / "cache-2")
    assert again["value"] == 42 and again["compiled"] == []


def test_an_edited_source_misses_the_tier(tmp_path: Path) -> None:
    make_package(tmp_path)
    build(tmp_path, tmp_path)
    make_package(tmp_path, factor=3)  # the kernel changed after the tier was built
    edited = run(tmp_path, tmp_path / "cache-1")
    assert edited["value"] == 63
    assert sorted(edited["compiled"]) == ["double", "inner"] and edited["loaded"] == []


def test_the_build_refuses_a_cpu_it_was_not_told() -> None:
    code = "from rummy_agents.prebuild import warm_up; warm_up()"
    env = dict(os.environ, **{prebuilt.BUILD_ENV: "1"})
    env.pop("NUMBA_CPU_NAME", None)
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert res.returncode != 0 and f"NUMBA_CPU_NAME={prebuilt.PREBUILT_CPU}" in res.stderr


def test_rummy_env_kernels_have_a_tier_folder() -> None:
    from rummy_env.core import melds

    found = prebuilt.stamp_and_folder(melds.__file__)
    assert found is not None
    stamp, folder = found
    assert folder.parts[-2:] == (prebuilt.FOLDER, "core") and len(stamp) == 64


SIDE = """
import sys
import tierpkg
from tierpkg.k import triple
sys.exit(0 if (int(tierpkg.double(21)), int(triple(2))) == (42, 6) else 1)
"""


def test_build_processes_side_by_side_keep_every_entry(tmp_path: Path) -> None:
    """The build runs one process per game at once (``rummy_agents.prebuild.build``): their
    saves to one index are locked, so no process's entries are lost.
    """
    pkg = make_package(tmp_path)
    with open(pkg / "k.py", "a") as f:
        f.write("\n@kernel\ndef triple(x):\n    return inner(x) + x\n")
    env = dict(
        os.environ,
        PYTHONPATH=str(tmp_path),
        **{prebuilt.BUILD_ENV: "1", "NUMBA_CPU_NAME": prebuilt.PREBUILT_CPU},
        NUMBA_CPU_FEATURES="",
    )
    procs = []
    for k in range(3):
        part_env = dict(env, NUMBA_CACHE_DIR=str(tmp_path / f"build-{k}"))
        procs.append(subprocess.Popen([sys.executable, "-c", SIDE], env=part_env, cwd=tmp_path))
    assert [p.wait() for p in procs] == [0, 0, 0]
    fresh = run(tmp_path, tmp_path / "cache-1")
    assert fresh["value"] == 42 and fresh["compiled"] == []
    names = sorted(p.name.split("-")[0] for p in (pkg / prebuilt.FOLDER).glob("*.nbi"))
    assert names == ["k.double", "k.inner", "k.triple"]


def test_the_tier_is_current_only_for_its_sources_numba_and_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``prebuild --if-stale`` (run by the install) skips a tier built from the same sources,
    numba and Python with nothing left to compile, and rebuilds any other.
    """
    import numba

    from rummy_agents import prebuild

    roots = [tmp_path / "rummy_env", tmp_path / "agents"]
    monkeypatch.setattr(prebuild, "_digests", lambda: {r: f"digest-{r.name}" for r in roots})
    assert not prebuild.current()  # no manifests
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    good = {
        "numba": numba.__version__,
        "python": version,
        "compiled_after": [],
        "cpu": prebuilt.PREBUILT_CPU,
    }

    def write(**change: object) -> None:
        for root in roots:
            (root / prebuilt.FOLDER).mkdir(parents=True, exist_ok=True)
            manifest = {**good, "digest": f"digest-{root.name}", **change}
            (root / prebuilt.FOLDER / prebuilt.MANIFEST).write_text(json.dumps(manifest))

    write()
    assert prebuild.current()
    for change in (
        {"digest": "another"},
        {"numba": "0.1"},
        {"python": "2.7"},
        {"compiled_after": ["rummy_env.core.melds.x"]},
        {"cpu": prebuild.cpu_label("host")},
    ):
        write(**change)
        assert not prebuild.current(), change
    # a checkout's install builds for its host: current for that, not for a wheel
    write(cpu=prebuild.cpu_label("host"))
    assert prebuild.current("host") and not prebuild.current("portable")
    with pytest.raises(ValueError, match="cpu must be one of portable, host, got 'arm'"):
        prebuild.current("arm")
    write()
    (roots[1] / prebuilt.FOLDER / prebuilt.MANIFEST).write_text("not json")
    assert not prebuild.current()


def test_the_install_can_skip_the_prebuild(tmp_path: Path) -> None:
    """``RUMMY_ENV_PREBUILD_AT_INSTALL=0``: setup.py's ``build_py`` builds no kernels and says
    so (they compile at first use).
    """
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, RUMMY_ENV_PREBUILD_AT_INSTALL="0")
    res = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(tmp_path / "lib")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert "RUMMY_ENV_PREBUILD_AT_INSTALL=0: no prebuilt kernels" in res.stderr
    assert "compiling the prebuilt kernels" not in res.stderr
    assert (tmp_path / "lib" / "rummy_env" / "__init__.py").is_file()
