"""Everything is declared in pyproject.toml; this file only tags the wheel.

A wheel built after ``python -m rummy_agents.prebuild`` carries machine code (the prebuilt kernels
in ``rummy_env/_prebuilt`` and ``agents/_prebuilt``) for one platform and Python version, so it
is tagged for them (``cp311-cp311-linux_x86_64``, say); without them it is a pure wheel.
"""

from pathlib import Path

from setuptools import setup
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent


class Dist(Distribution):
    """Reports native content when a prebuilt tier is present (the wheel's platform tag)."""

    def has_ext_modules(self) -> bool:  # noqa: D102 - setuptools' hook
        return any(
            next((HERE / pkg / "_prebuilt").rglob("*.nbc"), None) is not None
            for pkg in ("rummy_env", "agents")
        )


setup(distclass=Dist)
