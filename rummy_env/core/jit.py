"""``kernel``: the decorator of every compiled function of the package.

It is numba's ``njit(cache=True)`` with one change that matters for start-up time: a call from
compiled code compiles the callee for *widened* argument types. numba specialises a function
for the exact types of each call site: ``f(rec, 0)`` and ``f(rec, p)`` compile ``f`` twice
(``Literal[int](0)`` and ``int64``), as do ``g(rec.cur)`` (``int8``) and ``g(p)`` (``int64``).
Each specialisation is a full compile, and every caller that links it optimises and emits its
machine code again. Here a literal is typed as its plain type and every integer narrower than
64 bits as ``int64`` (all values are preserved; the call site casts), so each function
compiles once per kind of argument. Measured with an empty numba cache (import to first AEC
step): Gin 40 -> 28 s, 500 Rum 60 -> 43 s, Rummy 51 63 -> 49 s on the 2-core development
machine (busy that day), with the same results at run time (recorded trajectories replay).

Calls from Python are unaffected: numba already types Python ints as ``int64``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from numba.core import config, types
from numba.core.registry import CPUDispatcher

F = TypeVar("F", bound=Callable[..., Any])


def widen(t: types.Type) -> types.Type:
    """The type a compiled callee is specialised for when called with an argument of type
    ``t``: literals lose their value, integers narrower than 64 bits become ``int64``.
    """
    t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.bitwidth < 64:
        return types.int64
    return t


class KernelDispatcher(CPUDispatcher):
    """numba's CPU dispatcher, compiling calls from compiled code for ``widen``-ed types."""

    def get_call_template(self, args: tuple, kws: dict) -> Any:
        """Type a call from compiled code (numba's hook), after widening the argument types."""
        args = tuple(widen(a) for a in args)
        kws = {k: widen(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)


def kernel(fn: F | None = None, *, inline: str = "never", parallel: bool = False) -> Any:
    """Compile ``fn`` in nopython mode, cached on disk, with ``widen``-ed callee types.

    Use as ``@kernel``, ``@kernel(inline="always")`` (numba inlines the function's IR into
    each caller: for tiny helpers) or ``@kernel(parallel=True)``.
    """

    def wrap(f: F) -> F:
        if config.DISABLE_JIT:
            return f
        options: dict[str, Any] = {"nopython": True, "inline": inline}
        if parallel:
            options["parallel"] = True
        disp = KernelDispatcher(py_func=f, locals={}, targetoptions=options)
        disp.enable_caching()
        return disp  # type: ignore[return-value]

    return wrap(fn) if fn is not None else wrap


__all__ = ["KernelDispatcher", "kernel", "widen"]
