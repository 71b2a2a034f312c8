"""numba record types get names from their layout, so cached kernels never collide.

numba's default names a record type by a per-process counter: two processes compiling one
kernel for two layouts (2 and 6 players) could cache both under one symbol, and a third process
would run one layout's code on the other (``rummy_env.core.records``).
"""

from __future__ import annotations

import subprocess
import sys

import numba
from numba.core import itanium_mangler

import rummy_env.core  # noqa: F401  (applies the patch)
from rummy_env.rules.rummy51.state import make_state_dtype

SNIPPET = """
import numba
from numba.core import itanium_mangler
import rummy_env.core
from rummy_env.rules.rummy51.state import make_state_dtype
for p in {order}:
    t = numba.from_dtype(make_state_dtype(p, 108, 36))
    print(p, itanium_mangler.mangle_type_or_value(t))
"""


def _mangled(num_players: int) -> str:
    rec = numba.from_dtype(make_state_dtype(num_players, 108, 36))
    return itanium_mangler.mangle_type_or_value(rec)


def test_layouts_get_distinct_names() -> None:
    names = {p: _mangled(p) for p in (2, 3, 4, 6)}
    assert len(set(names.values())) == 4, names


def test_same_layout_same_name_in_one_process() -> None:
    assert _mangled(2) == _mangled(2)


def test_names_do_not_depend_on_creation_order_across_processes() -> None:
    """The counter that numba's own names use differs between these two processes."""
    out = []
    for order in ("[2, 6]", "[6, 4, 3, 2]"):
        code = SNIPPET.format(order=order)
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        out.append(dict(line.split(" ", 1) for line in res.stdout.split("\n") if line))
    assert out[0]["2"] == out[1]["2"]
    assert out[0]["6"] == out[1]["6"]
    assert out[0]["2"] != out[0]["6"]
