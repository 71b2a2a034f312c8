"""First run of an installed rummy_env (.ci/wheel): for each game, a fresh interpreter with an
empty numba cache imports the package, makes the AEC env, resets and steps once, then the
Gymnasium env does the same. With ``--prebuilt`` (a wheel built with its prebuilt kernels) no
kernel may compile; the times are printed, not checked (the machine is shared).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

CODE = """
import json, time
t0 = time.perf_counter()
from rummy_env.core.jit import record_compiles
compiled = []
record_compiles(compiled)
import numpy as np
import rummy_env
env = rummy_env.{module}.env()
env.reset(seed=0)
env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
t_aec = time.perf_counter() - t0
import gymnasium
genv = gymnasium.make("{gym_id}")
genv.reset(seed=0)
genv.step(int(np.flatnonzero(genv.unwrapped.action_masks())[0]))
print(json.dumps({{"aec_s": t_aec, "gym_s": time.perf_counter() - t0, "compiled": compiled}}))
"""

GAMES = [
    ("gin_rummy_v0", "rummy/GinRummy-v0"),
    ("five_hundred_rum_v1", "rummy/FiveHundredRum-v1"),
    ("rummy51_v1", "rummy/Rummy51-v1"),
]


def main() -> int:
    """Run every game; exit 1 when a kernel compiled that the wheel should have carried."""
    expect_prebuilt = "--prebuilt" in sys.argv[1:]
    failed = False
    for module, gym_id in GAMES:
        with tempfile.TemporaryDirectory(prefix="numba_cold_") as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            out = subprocess.run(
                [sys.executable, "-c", CODE.format(module=module, gym_id=gym_id)],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(
            f"{module}: import to first AEC step {r['aec_s']:.1f} s, to first Gymnasium step "
            f"{r['gym_s']:.1f} s, empty numba cache; {len(r['compiled'])} functions compiled"
        )
        if expect_prebuilt and r["compiled"]:
            print(f"  compiled despite the prebuilt kernels: {sorted(set(r['compiled']))}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
