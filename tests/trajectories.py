"""Recorded trajectories: proof that restructuring changes no behaviour.

Each case plays fixed seeds through an AEC env (agents' moves included), a vector env (random
legal actions) or the learned agents' input features, and reduces everything the user sees
(observations, masks, rewards, terminations, infos, the agents' chosen actions, feature vectors)
to per-step digests. ``tests/data/trajectories.json`` holds the digests recorded before a
restructuring; ``tests/test_trajectories.py`` replays every case and compares.

Re-record only for an intended behaviour change (and bump the env's ``_vN``)::

    python tests/trajectories.py --write

or, for an intended change of an agent (not of an env), only its AEC cases::

    python tests/trajectories.py --write --only gin_ppo,rummy51_ppo

(``--only`` also takes the Gymnasium cases, ``GYM_CASES``: the ids with their rule opponents.)
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

import rummy_env
from rummy_agents.arena.registry import make_agent
from rummy_agents.base import SeatView
from rummy_agents.features import FEATURES, add_features

DATA = Path(__file__).parent / "data" / "trajectories.json"

# Info keys renamed since the recording: new name -> recorded name.
INFO_ALIASES: dict[str, str] = {}

AEC_CASES: dict[str, tuple[str, dict[str, Any], list[str], list[int]]] = {
    # name: (game, options, agent specs per seat, reset seeds)
    "gin_default": ("gin_rummy", {}, ["planner", "random"], [0, 1, 2]),
    "gin_simple_novice": ("gin_rummy", {}, ["simple", "novice"], [3, 4]),
    "gin_oklahoma": ("gin_rummy", {"oklahoma": True}, ["simple_best", "planner"], [5, 6]),
    "gin_match_manual": (
        "gin_rummy",
        {"episode": "match", "target": 60, "auto_meld": False},
        ["random", "planner"],
        [7],
    ),
    "gin_heuristic": ("gin_rummy", {}, ["heuristic", "simple"], [8]),
    "five_hundred_rum_2p": ("five_hundred_rum", {}, ["greedy", "random"], [0, 1, 2]),
    "five_hundred_rum_4p_game": (
        "five_hundred_rum",
        {"num_players": 4, "episode": "game", "target": 150},
        ["greedy", "random", "greedy", "random"],
        [3],
    ),
    "five_hundred_rum_3p_variants": (
        "five_hundred_rum",
        {"num_players": 3, "going_out": "floating", "must_meld_discard": True},
        ["greedy", "greedy", "random"],
        [4, 5],
    ),
    "five_hundred_rum_heuristic": ("five_hundred_rum", {}, ["heuristic", "greedy"], [6]),
    "rummy51_2p": ("rummy51", {}, ["greedy", "random"], [0, 1, 2]),
    "rummy51_4p_match": (
        "rummy51",
        {"num_players": 4, "episode": "match"},
        ["greedy_plus", "greedy", "random", "greedy"],
        [3],
    ),
    "rummy51_3p_plus": (
        "rummy51",
        {"num_players": 3},
        ["greedy_plus", "greedy", "greedy_plus"],
        [4],
    ),
    "rummy51_heuristic": ("rummy51", {}, ["heuristic", "greedy"], [5]),
    # The published agents (rummy_agents.published): their input features and network, move by
    # move. Re-recorded when the int8 files replaced the float32 checkpoints under results/.
    "gin_ppo": ("gin_rummy", {}, ["ppo", "simple"], [9]),
    "five_hundred_rum_ppo": ("five_hundred_rum", {}, ["ppo", "greedy"], [7]),
    "rummy51_ppo": ("rummy51", {}, ["ppo", "greedy"], [6]),
}

VECTOR_CASES: dict[str, tuple[str, dict[str, Any], int, int]] = {
    # name: (game, options, num_envs, steps)
    "vec_gin": ("gin_rummy", {}, 16, 300),
    "vec_gin_oklahoma_match": ("gin_rummy", {"oklahoma": True, "episode": "match"}, 8, 300),
    "vec_five_hundred_rum_3p": ("five_hundred_rum", {"num_players": 3}, 16, 300),
    "vec_rummy51_4p": ("rummy51", {"num_players": 4}, 16, 300),
}

GYM_CASES: dict[str, tuple[str, dict[str, Any], int | None, int]] = {
    # name: (Gymnasium id, make kwargs, num_envs (None: gymnasium.make), learner steps); the
    # ids' default opponents (simple, greedy) unless the kwargs name one
    "gym_gin": ("rummy/GinRummy-v0", {}, None, 400),
    "gym_gin_oklahoma_seat1": (
        "rummy/GinRummy-v0",
        {"oklahoma": True, "learner_seat": 1, "opponent": "planner"},
        None,
        300,
    ),
    "gym_gin_novice_match": (
        "rummy/GinRummy-v0",
        {"opponent": "novice", "episode": "match", "target": 50},
        None,
        300,
    ),
    "gym_gin_3p": ("rummy/GinRummy-v0", {"num_players": 3}, None, 200),
    "gym_five_hundred_rum": ("rummy/FiveHundredRum-v1", {}, None, 300),
    "gym_five_hundred_rum_3p_hold": (
        "rummy/FiveHundredRum-v1",
        {"num_players": 3, "opponent": "greedy@hold_melds=3"},
        None,
        200,
    ),
    "gym_rummy51": ("rummy/Rummy51-v1", {}, None, 300),
    "gym_rummy51_hold_open": ("rummy/Rummy51-v1", {"opponent": "greedy@hold_open=3"}, None, 200),
    "gymvec_gin": ("rummy/GinRummy-v0", {}, 8, 150),
    "gymvec_gin_simple_best": ("rummy/GinRummy-v0", {"opponent": "simple_best"}, 8, 100),
    "gymvec_five_hundred_rum": ("rummy/FiveHundredRum-v1", {}, 8, 100),
    "gymvec_rummy51": ("rummy/Rummy51-v1", {}, 8, 100),
    "gymvec_gin_planner_seat1": (
        "rummy/GinRummy-v0",
        {"opponent": "planner", "learner_seat": 1},
        16,
        100,
    ),
    "gymvec_gin_novice_manual": (
        "rummy/GinRummy-v0",
        {"opponent": "novice", "auto_meld": False},
        8,
        150,
    ),
    "gymvec_gin_match": ("rummy/GinRummy-v0", {"episode": "match", "target": 50}, 8, 150),
    "gymvec_gin_300": ("rummy/GinRummy-v0", {}, 300, 101),
    "gymvec_five_hundred_rum_3p_hold": (
        "rummy/FiveHundredRum-v1",
        {"num_players": 3, "opponent": "greedy@hold_melds=3"},
        8,
        100,
    ),
    "gymvec_rummy51_3p_hold_open": (
        "rummy/Rummy51-v1",
        {"num_players": 3, "opponent": "greedy@hold_open=3"},
        8,
        100,
    ),
}
"""The Gymnasium ids with their rule opponents (recorded before issue 52 made them compiled)."""

MAX_DECISIONS = 3000


def _h(*parts: Any) -> str:
    m = hashlib.blake2b(digest_size=6)
    for p in parts:
        if isinstance(p, dict):
            for k in sorted(p):
                m.update(str(k).encode() + _h(p[k]).encode())
        elif isinstance(p, np.ndarray):
            m.update(str(p.dtype).encode() + str(p.shape).encode())
            m.update(np.ascontiguousarray(p).tobytes())
        else:
            m.update(repr(p).encode())
    return m.hexdigest()


def _plain(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, float):
        return round(v, 6)
    return v


def canonical_info(info: dict[str, Any]) -> str:
    """Infos as sorted JSON under their recorded key names (vector infos: only the rows of
    games that just ended, where ``_final_observation`` is True; other rows are undefined).
    """
    done = info.get("_final_observation")
    if done is not None:
        info = {
            k: (v if k in ("current_player", "_final_observation") else v[done])
            for k, v in info.items()
        }
    named = {INFO_ALIASES.get(k, k): _plain(v) for k, v in info.items()}
    return json.dumps(named, sort_keys=True)


ROOT = Path(__file__).resolve().parent.parent


def play_aec(game: str, options: dict[str, Any], specs: list[str], seed: int) -> list[str]:
    """Per-decision digests of one episode: seat, action, observation, mask, rewards, infos."""
    env = rummy_env.ENV_MODULES[game].raw_env(**options)
    env.reset(seed=seed)
    names = list(env.possible_agents)
    specs = [s.replace("checkpoint=", f"checkpoint={ROOT}/") for s in specs]
    agents = [make_agent(s, seed=seed * 10 + i, game=game) for i, s in enumerate(specs)]
    views = {a: SeatView(env, a) for a in names}
    out = []
    for _ in range(MAX_DECISIONS):
        if all(env.terminations[a] or env.truncations[a] for a in names):
            break
        agent = env.agent_selection
        obs = env.observe(agent)
        seat = names.index(agent)
        a = int(agents[seat].act(obs, views[agent]))
        env.step(a)
        rewards = [float(env.rewards[n]) for n in names]
        flags = [(bool(env.terminations[n]), bool(env.truncations[n])) for n in names]
        infos = [canonical_info(env.infos[n]) for n in names]
        out.append(
            f"{seat}:{a}:"
            + _h(obs["observation"], obs["action_mask"], rewards, flags, infos, env.agent_selection)
        )
    return out


def play_vector(game: str, options: dict[str, Any], n: int, steps: int) -> list[str]:
    """Per-step digests of a vector env driven by random legal actions."""
    venv = rummy_env.make_vec(game, n, seed=11, **options)
    obs, info = venv.reset(seed=11)
    rng = np.random.default_rng(5)
    out = [_h(obs, canonical_info(info))]
    for _ in range(steps):
        masks = venv.action_masks()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rew, term, trunc, info = venv.step(acts)
        out.append(_h(acts, obs, rew, term, trunc, canonical_info(info)))
    venv.close()
    return out


def _gym_info(info: dict[str, Any]) -> str:
    """A Gymnasium vector info as sorted JSON, the finished-episode entries only in the rows
    where they are defined (``_final_obs``, ``_final_info``).
    """
    out: dict[str, Any] = {}
    for k, v in info.items():
        if k in ("final_obs", "final_info") and f"_{k}" in info:
            rows = info[f"_{k}"]
            v = {kk: vv[rows] for kk, vv in v.items()} if isinstance(v, dict) else v[rows]
        out[k] = _plain(v)
    return json.dumps(out, sort_keys=True)


def play_gym(gym_id: str, kwargs: dict[str, Any], num_envs: int | None, steps: int) -> list[str]:
    """Per-step digests of a Gymnasium id driven by random legal learner actions (and, in the
    single env, an illegal one now and then, which the env replaces from its own stream).
    """
    import gymnasium

    rng = np.random.default_rng(17)
    if num_envs is not None:
        venv = gymnasium.make_vec(gym_id, num_envs=num_envs, **kwargs)
        obs, info = venv.reset(seed=21)
        out = [_h(obs, _gym_info(info))]
        for _ in range(steps):
            masks = venv.action_masks()
            acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rew, term, trunc, info = venv.step(acts)
            out.append(_h(acts, obs, rew, term, trunc, _gym_info(info)))
        venv.close()
        return out
    env = gymnasium.make(gym_id, **kwargs)
    obs, info = env.reset(seed=21)
    out = [_h(obs, canonical_info(info))]
    for k in range(steps):
        mask = env.unwrapped.action_masks()
        if k % 37 == 36 and not mask.all():
            a = int(np.flatnonzero(~mask)[0])
        else:
            a = int(rng.choice(np.flatnonzero(mask)))
        obs, rew, term, trunc, info = env.step(a)
        out.append(_h(a, obs, float(rew), bool(term), bool(trunc), canonical_info(info)))
        if term or trunc:
            obs, info = env.reset()
            out.append(_h(obs, canonical_info(info)))
    env.close()
    return out


def feature_digests() -> dict[str, list[str]]:
    """Digests of every learned-agent feature set over observations of played games."""
    out: dict[str, list[str]] = {}
    for game, opts in (("gin_rummy", {}), ("five_hundred_rum", {}), ("rummy51", {})):
        venv = rummy_env.make_vec(game, 8, seed=3, **opts)
        obs, _ = venv.reset(seed=3)
        rng = np.random.default_rng(9)
        rows = [obs["observation"]]
        for _ in range(60):
            masks = venv.action_masks()
            obs, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            rows.append(obs["observation"])
        venv.close()
        width = rows[0].shape[1]
        for name in FEATURES:
            if (name == "gin_deadwood") != (game == "gin_rummy") and name != "none":
                continue  # the feature set belongs to another game
            try:
                feats = [add_features(name, r) for r in rows]
            except ValueError:
                continue  # 500 Rum only
            out[f"{game}/{name}/{width}"] = [_h(np.asarray(f, np.float32)) for f in feats]
    return out


def record() -> dict[str, Any]:
    """Every case's digests."""
    data: dict[str, Any] = {"aec": {}, "vector": {}}
    for name, (game, options, specs, seeds) in AEC_CASES.items():
        data["aec"][name] = {str(s): play_aec(game, options, specs, s) for s in seeds}
    for name, (game, options, n, steps) in VECTOR_CASES.items():
        data["vector"][name] = play_vector(game, options, n, steps)
    data["features"] = feature_digests()
    data["gym"] = {name: play_gym(*case) for name, case in GYM_CASES.items()}
    return data


if __name__ == "__main__":
    if "--write" not in sys.argv:
        sys.exit("usage: python tests/trajectories.py --write")
    DATA.parent.mkdir(exist_ok=True)
    if "--only" in sys.argv:
        names = sys.argv[sys.argv.index("--only") + 1].split(",")
        data = json.loads(DATA.read_text())
        for name in names:
            if name in GYM_CASES:
                data.setdefault("gym", {})[name] = play_gym(*GYM_CASES[name])
                continue
            game, options, specs, seeds = AEC_CASES[name]
            data["aec"][name] = {str(s): play_aec(game, options, specs, s) for s in seeds}
    else:
        data = record()
    DATA.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    print(f"wrote {DATA}")
