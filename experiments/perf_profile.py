"""Where a Gymnasium id's vector step spends its time, by compiled function: ``perf`` with the
symbols of every function numba links into the kernels.

``perf`` cannot name JIT code by itself. numba's cached kernels are object files loaded into
memory, and a kernel's object holds a copy of every function it calls that was not inlined. So
this script keeps each object as numba loads it (a hook on ``CPUCodeLibrary._set_compiled_object``
installed before any kernel loads), reads each one's symbol table with ``nm``, and writes
``/tmp/perf-<pid>.map`` (the file ``perf report`` reads for JIT code). Then it steps the id's
``make_vec`` with random legal learner actions (the benchmark's loop) while ``perf record``
samples the process, and prints the hottest symbols.

Usage:
    python experiments/perf_profile.py                              # Rummy 51, 1 thread, 8 s
    python experiments/perf_profile.py --game five_hundred_rum --threads 2 --seconds 5

Needs ``perf`` and ``nm`` (binutils) on the PATH, and permission to sample a process of your
own (``kernel.perf_event_paranoid`` <= 2 is enough for user-space samples). The map names each
function by its module and name; functions numba inlined are counted in their callers.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def keep_objects() -> None:
    """Keep the object code of every numba library loaded from here on (``lib._kept``)."""
    from numba.core import codegen  # noqa: PLC0415

    original = codegen.CPUCodeLibrary._set_compiled_object

    def _set(self: Any, value: bytes) -> None:
        self._kept = bytes(value)
        original(self, value)

    codegen.CPUCodeLibrary._set_compiled_object = _set


def short_name(symbol: str) -> str:
    """``module.function`` from a numba-mangled symbol (its last two qualified parts)."""
    m = re.match(r"_ZN((?:\d+[A-Za-z_][A-Za-z0-9_]*)+?)(?:B\d|E|\d+\$)", symbol)
    if not m:
        return symbol[:60]
    parts, rest = [], m.group(1)
    while rest:
        n = re.match(r"\d+", rest)
        if n is None:
            break
        k = int(n.group(0))
        rest = rest[n.end() :]
        parts.append(rest[:k])
        rest = rest[k:]
    return ".".join(parts[-2:])


def write_map() -> Path:
    """Write ``/tmp/perf-<pid>.map`` for every kept object's text symbols; returns its path."""
    import gc  # noqa: PLC0415

    from numba.core.registry import CPUDispatcher  # noqa: PLC0415

    symbols: dict[int, tuple[int, str]] = {}
    for obj in gc.get_objects():
        if not isinstance(obj, CPUDispatcher):
            continue
        for cres in list(obj.overloads.values()):
            lib = cres.library
            data = getattr(lib, "_kept", None)
            if data is None:
                continue
            top = cres.fndesc.llvm_func_name
            address = lib.get_pointer_to_function(top)
            with tempfile.NamedTemporaryFile(suffix=".o", delete=False) as f:
                f.write(data)
            try:
                table = subprocess.run(
                    ["nm", "--defined-only", "-S", f.name], capture_output=True, text=True
                ).stdout
            finally:
                os.unlink(f.name)
            rows = []
            for line in table.splitlines():
                p = line.split()
                if len(p) == 4 and p[2] in "tTwW":
                    rows.append((int(p[0], 16), int(p[1], 16), p[3]))
            base = next((address - off for off, _, name in rows if name == top), None)
            if base is None:
                continue  # (the object's text is one section: offsets map by one base)
            for off, size, name in rows:
                symbols[base + off] = (size, short_name(name))
    path = Path(f"/tmp/perf-{os.getpid()}.map")
    with path.open("w") as f:
        for address in sorted(symbols):
            size, name = symbols[address]
            f.write(f"{address:x} {max(size, 1):x} {name}\n")
    return path


def main(argv: list[str] | None = None) -> None:
    keep_objects()  # before any kernel loads
    # (run as a script, its folder is first on the import path; the benchmark module imports
    # the standard library and numpy only: no kernel loads)
    import benchmark  # noqa: PLC0415

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="rummy51", choices=list(benchmark.GYM_IDS))
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--top", type=int, default=40)
    args = p.parse_args(argv)
    for tool in ("perf", "nm"):
        if shutil.which(tool) is None:
            sys.exit(f"perf_profile: {tool!r} is not on the PATH")

    import numba  # noqa: PLC0415

    numba.set_num_threads(args.threads)
    bench = benchmark.GymBench(args.game, args.num_envs)
    bench.run(1.0)  # every kernel of the loop loaded
    print(f"perf map: {write_map()}", file=sys.stderr)
    data = Path(tempfile.gettempdir()) / f"perf_profile_{os.getpid()}.data"
    rec = subprocess.Popen(
        ["perf", "record", "-q", "-F", "2000", "-p", str(os.getpid()), "-o", str(data)],
        stdout=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    rate = bench.run(args.seconds)[0]
    rec.send_signal(signal.SIGINT)  # perf writes its data and exits
    rec.wait()
    print(f"{args.game} make_vec({args.num_envs}), {args.threads} thread(s): {rate:,.0f} steps/s")
    report = subprocess.run(
        ["perf", "report", "-i", str(data), "--no-children", "--sort", "sym", "--stdio"],
        capture_output=True,
        text=True,
    ).stdout
    lines = [x for x in report.splitlines() if x.strip() and not x.startswith("#")]
    print("\n".join(lines[: args.top]))
    data.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
