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
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

from rummy_env.core import prebuilt

F = TypeVar("F", bound=Callable[..., Any])


def widen(t: types.Type) -> types.Type:
    """The type a compiled callee is specialised for when called with an argument of type
    ``t``: literals lose their value, integers narrower than 64 bits become ``int64``.
    """
    t = types.unliteral(t)
    # numba's bundled stubs leave out Integer.bitwidth (set in its __init__)
    if isinstance(t, types.Integer) and t.bitwidth < 64:  # type: ignore[attr-defined]
        return types.int64
    return t


class KernelCache(FunctionCache):
    """numba's on-disk cache of a function, backed by the read-only prebuilt tier of its
    package (``core.prebuilt``): a miss in numba's cache loads the prebuilt code if any. In the
    process that builds the tier, the tier is the cache (saves go there).
    """

    _UNSET: Any = object()

    def __init__(self, py_func: Callable[..., Any]) -> None:
        super().__init__(py_func)
        self._tier_found = self._UNSET

    def _tier(self) -> prebuilt.PrebuiltTier | None:
        # looked up at the first load, not at decoration: a module may be imported (and its
        # kernels decorated) before its package's digest is computed
        if self._tier_found is self._UNSET:
            self._tier_found = prebuilt.PrebuiltTier.for_function(
                self._py_func, self._impl.filename_base
            )
        return self._tier_found

    def _load_overload(self, sig: Any, target_context: Any) -> Any:
        data = super()._load_overload(sig, target_context)
        tier = self._tier() if data is None and self._enabled else None
        if tier is None:
            return data
        own = self._index_key(sig, target_context.codegen())
        # a wheel's tier is built for PREBUILT_CPU; a checkout's for its host (numba's own key)
        portable = (own[0], prebuilt.magic_tuple(target_context.codegen()), own[2])
        try:
            found = tier.load(portable)
            if found is None and own != portable:
                found = tier.load(own)
            return None if found is None else self._impl.rebuild(target_context, found)
        except Exception:  # noqa: BLE001 - an unreadable entry compiles, as a miss would
            return None

    def _save_overload(self, sig: Any, data: Any) -> None:
        tier = self._tier() if prebuilt.building() else None
        if tier is None:
            super()._save_overload(sig, data)
        elif self._enabled and self._impl.check_cachable(data):
            tier.save(self._index_key(sig, data.codegen), self._impl.reduce(data))


def holds_counted(t: types.Type) -> bool:
    """Does a value of type ``t`` carry a reference-counted object (an array, a list, a
    dict, a string ...), itself or inside a tuple of them?
    """
    if isinstance(t, types.BaseTuple):
        members: tuple[types.Type, ...] = t.types  # type: ignore[attr-defined]  # (numba stubs)
        return any(holds_counted(x) for x in members)
    if isinstance(t, types.Optional):
        return holds_counted(t.type)
    return isinstance(t, (types.Buffer, types.Container, types.UnicodeType, types.DictType))


class KernelDispatcher(CPUDispatcher):
    """numba's CPU dispatcher, compiling calls from compiled code for ``widen``-ed types, and
    caching with ``KernelCache``.
    """

    counted = True
    """False for a kernel compiled without reference counting (``kernel(counted=False)``)."""

    def add_overload(self, cres: Any) -> None:
        """Register a compiled or cached specialisation (numba's hook). An uncounted kernel
        returning an array (a view of an argument, say) would hand its caller a reference
        never taken, which the caller then drops: refused.
        """
        rt = cres.signature.return_type
        if not self.counted and holds_counted(rt):
            raise TypeError(
                f"{self.py_func.__qualname__} is compiled with counted=False but returns {rt}:"
                " an uncounted kernel may return only scalars and tuples of them"
            )
        super().add_overload(cres)

    def enable_caching(self) -> None:
        """Cache on disk (numba's hook), with the prebuilt tier behind numba's cache."""
        self._cache = KernelCache(self.py_func)

    # numba calls it with a tuple and a dict; its stubs declare wider types
    def get_call_template(self, args: tuple, kws: dict) -> Any:  # type: ignore[override]
        """Type a call from compiled code (numba's hook), after widening the argument types."""
        args = tuple(widen(a) for a in args)
        kws = {k: widen(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)


def kernel(
    fn: F | None = None, *, inline: str = "never", parallel: bool = False, counted: bool = True
) -> Any:
    """Compile ``fn`` in nopython mode, cached on disk, with ``widen``-ed callee types.

    Use as ``@kernel``, ``@kernel(inline="always")`` (numba inlines the function's IR into
    each caller: for tiny helpers), ``@kernel(parallel=True)`` or ``@kernel(counted=False)``.

    ``counted=False`` compiles the function without numba's runtime (``_nrt=False``): no atomic
    reference count is taken and dropped for each array it is passed, slices, or passes on
    (numba counts every array argument at a function's entry and exit and every view it makes;
    in the search kernels that was a fifth of the time). The function may then not allocate
    (a compile error) nor return an array (refused at compile time, ``holds_counted``), and
    must not keep the result of a callee that returns one (it would never be released); the
    arrays it is passed outlive the call, held by its caller. For the hot loops over buffers
    their callers allocate.
    """

    def wrap(f: F) -> F:
        if config.DISABLE_JIT:  # type: ignore[attr-defined]  # set from the environment
            return f
        options: dict[str, Any] = {"nopython": True, "inline": inline}
        if parallel:
            options["parallel"] = True
        # set either way: a callee left unset inherits its first caller's setting (numba's
        # ConfigStack), and an uncounted caller would compile it without the runtime
        options["_nrt"] = counted
        disp = KernelDispatcher(py_func=f, locals={}, targetoptions=options)
        disp.counted = counted
        disp.enable_caching()
        return disp  # type: ignore[return-value]

    return wrap(fn) if fn is not None else wrap


def entry_point(fn: Any, *args: Any) -> Callable[..., Any]:
    """The compiled code that ``fn(*args)`` runs, callable without numba's dispatch.

    A call through the dispatcher types every argument first (about 0.3 us for a few arrays,
    more than many kernels take); the entry point only unboxes them. It compiles (or loads from
    the cache) exactly as that first call would. The caller must pass arguments of the same
    types on every later call: a wrong type is not caught and may crash. Under
    ``NUMBA_DISABLE_JIT`` it is ``fn`` itself.
    """
    if not isinstance(fn, CPUDispatcher):
        return fn
    return fn.compile(tuple(fn.typeof_pyval(a) for a in args))


def record_compiles(names: list[str], prefix: str = "") -> None:
    """From now on in this process, append to ``names`` the ``module.qualname`` of every
    function numba compiles (its ``numba:compile`` event) whose name starts with ``prefix``:
    how the prebuilt tier's build, its tests and CI's first-step check see what still compiles.
    """
    from numba.core import event  # noqa: PLC0415

    class Recorder(event.Listener):
        def on_start(self, ev: Any) -> None:
            pass

        def on_end(self, ev: Any) -> None:
            f = ev.data["dispatcher"].py_func
            name = f"{f.__module__}.{f.__qualname__}"
            if name.startswith(prefix):
                names.append(name)

    event.register("numba:compile", Recorder())


__all__ = [
    "KernelCache",
    "KernelDispatcher",
    "entry_point",
    "holds_counted",
    "kernel",
    "record_compiles",
    "widen",
]
