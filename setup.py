"""Everything is declared in pyproject.toml; this file builds the prebuilt kernels at install and
tags the wheel.

**Prebuilt kernels at install.** ``pip install -e .`` and ``pip wheel .`` run
``python -m rummy_agents.prebuild --if-stale`` from the source tree before building: the
package's numba kernels are compiled once (``rummy_env.core.prebuilt``), for this machine's CPU
in an editable install, for a baseline x86-64 CPU in a wheel, into ``rummy_env/_prebuilt`` and
``agents/_prebuilt`` (git-ignored), so that each game's first step loads them instead of
compiling for a minute. It takes 2-3 minutes on 2 cores, is skipped
when the folders are already built from the same sources, numba and Python, and never fails the
install: without numba, on another CPU, or with ``RUMMY_ENV_PREBUILD_AT_INSTALL=0``, the kernels
compile at first use as before. It runs with the target environment's Python when that already
has numba (the tier must match the numba it runs on), else with the build environment's (the
``[build-system]`` requirements: the same versions a fresh environment installs).

**Wheel tag.** A wheel that carries machine code is tagged for its platform and Python
(``cp311-cp311-linux_x86_64``, say); without it, it is a pure wheel.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
SWITCH = "RUMMY_ENV_PREBUILD_AT_INSTALL"
NEEDS = "import numba, numpy, gymnasium, pettingzoo, tqdm, PIL"

_prebuild_tried = False


def _say(message: str) -> None:
    print(f"rummy_env setup: {message}", file=sys.stderr, flush=True)


def _python_env(shim: str, isolated: bool) -> dict[str, str]:
    """The environment of a prebuild process: the source tree and ``shim`` (``rummy_agents``
    pointing at ``agents/``) first on the path; not ``isolated``: without pip's build-isolation
    overlay, so the target environment's packages are seen.
    """
    env = dict(os.environ)
    paths = [shim, str(HERE)]
    if isolated:
        paths += [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    else:
        env.pop("PYTHONNOUSERSITE", None)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def prebuild(cpu: str) -> None:
    """Build the prebuilt kernels into the source tree for ``cpu`` (``portable`` for a wheel,
    ``host`` for an editable install), once per setup run, if stale.
    """
    global _prebuild_tried
    if _prebuild_tried:
        return
    _prebuild_tried = True
    if os.environ.get(SWITCH, "1") == "0":
        _say(f"{SWITCH}=0: no prebuilt kernels (they compile at first use)")
        return
    if not (HERE / "agents" / "prebuild.py").is_file():
        return
    with tempfile.TemporaryDirectory() as shim:
        try:
            os.symlink(HERE / "agents", Path(shim) / "rummy_agents", target_is_directory=True)
        except OSError as e:
            _say(f"no prebuilt kernels ({e}); they compile at first use")
            return
        for isolated in (False, True):
            env = _python_env(shim, isolated)
            probe = subprocess.run([sys.executable, "-c", NEEDS], env=env, capture_output=True)
            if probe.returncode:
                continue
            run = subprocess.run(
                [sys.executable, "-m", "rummy_agents.prebuild", "--if-stale", "--cpu", cpu],
                env=env,
                cwd=HERE,
            )
            if run.returncode:
                _say("the prebuild failed; the kernels compile at first use")
            return
        _say("numba is not importable here: no prebuilt kernels (they compile at first use)")


class BuildPy(build_py):
    """``build_py`` (also run by ``pip install -e .``, in editable mode) after the prebuild:
    for this machine's CPU in an editable install, else for a wheel.
    """

    def run(self) -> None:  # noqa: D102 - setuptools' hook
        prebuild("host" if getattr(self, "editable_mode", False) else "portable")
        super().run()


class BdistWheel(bdist_wheel):
    """``bdist_wheel`` with the prebuild first (the wheel's tag depends on its result); not
    when another command (``dist_info``, ``editable_wheel``) only asks it for the tag.
    """

    def finalize_options(self) -> None:  # noqa: D102 - setuptools' hook
        if "bdist_wheel" in self.distribution.commands:
            prebuild("portable")
        super().finalize_options()


class Dist(Distribution):
    """Reports native content when a prebuilt tier is present (the wheel's platform tag)."""

    def has_ext_modules(self) -> bool:  # noqa: D102 - setuptools' hook
        return any(
            next((HERE / pkg / "_prebuilt").rglob("*.nbc"), None) is not None
            for pkg in ("rummy_env", "agents")
        )


setup(distclass=Dist, cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel})
