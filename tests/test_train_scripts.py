"""Smoke tests of the training scripts (a few hundred steps each) and the turn-based GAE."""

from __future__ import annotations

import csv
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(mod)
    return mod


def _run(script: str, *args: str) -> None:
    """Run an experiment script's ``main()`` in this process (no interpreter start-up)."""
    name = Path(script).stem
    old = sys.argv
    sys.argv = [script, *args]
    try:
        (sys.modules.get(name) or _script(name)).main()
    finally:
        sys.argv = old


def _plays_legally(agent, env, seed: int, steps: int) -> None:
    """Play ``agent`` in every seat of AEC ``env`` for ``steps`` turns: never a masked action."""
    env.reset(seed=seed)
    for _name in env.agent_iter(steps):
        ob, _, term, trunc, _ = env.last()
        a = None if term or trunc else agent.act(ob)
        assert a is None or ob["action_mask"][a] == 1
        env.step(a)


def test_gae_per_seat_trajectories() -> None:
    from selfplay.advantages import compute_gae as gae

    # one game, seats alternate 0,1,0,1; the hand ends after step 3: seat 0 wins 1, seat 1 loses
    cur = np.array([[0], [1], [0], [1]])
    values = np.array([[0.1], [0.2], [0.3], [0.4]])
    rewards = np.zeros((4, 1, 2))
    rewards[3, 0] = [1.0, -1.0]
    dones = np.array([[False], [False], [False], [True]])
    train = np.ones((4, 1), dtype=bool)
    adv = gae(values, rewards, dones, cur, train, np.zeros((1, 2)), gamma=1.0, lam=1.0)
    # lambda = 1: advantage = return - value; each seat's return is its final reward
    np.testing.assert_allclose(adv[:, 0], [1 - 0.1, -1 - 0.2, 1 - 0.3, -1 - 0.4])
    # lambda = 0: one-step targets within each seat's own sequence
    adv0 = gae(values, rewards, dones, cur, train, np.zeros((1, 2)), gamma=1.0, lam=0.0)
    np.testing.assert_allclose(adv0[:, 0], [0.3 - 0.1, 0.4 - 0.2, 1 - 0.3, -1 - 0.4])
    # untrained decisions (an opponent's seat) get no advantage and do not leak into the other
    train[:, 0] = [True, False, True, False]
    adv = gae(values, rewards, dones, cur, train, np.zeros((1, 2)), gamma=1.0, lam=1.0)
    np.testing.assert_allclose(adv[:, 0], [0.9, 0.0, 0.7, 0.0])
    # no episode end: the rollout bootstraps each seat from its own next value
    dones[:] = False
    rewards[:] = 0
    adv = gae(values, rewards, dones, cur, train, np.array([[0.5, -0.5]]), gamma=1.0, lam=0.0)
    np.testing.assert_allclose(adv[:, 0], [0.3 - 0.1, 0.0, 0.5 - 0.3, 0.0])
    # shaping: a decision also earns phi(next decision of its seat) - phi(its own state), and
    # the seat's last decision of an episode earns no shaping
    train[:] = True
    dones[3] = True
    rewards[3, 0] = [1.0, -1.0]
    phi = np.array([[-0.5], [-0.6], [-0.2], [-0.1]])
    adv = gae(values * 0, rewards, dones, cur, train, np.zeros((1, 2)), 1.0, 0.0, phi,
              np.zeros((1, 2)))  # fmt: skip
    np.testing.assert_allclose(adv[:, 0], [0.3, 0.5, 1.0, -1.0])


def test_ppo_selfplay_smoke_and_resume(tmp_path) -> None:
    out = tmp_path / "run"
    common = ["--no-progress", "--no-tensorboard"]
    _run("experiments/ppo_selfplay.py", "--num-envs", "32", "--num-steps", "8",
         "--total-steps", "512", "--eval-every", "1", "--eval-games", "8",
         "--checkpoint-every", "1", "--pool-every", "1", "--hidden", "32",
         "--out", str(out), *common)  # fmt: skip
    for f in ("config.json", "progress.csv", "checkpoint.pt", "agent.pt"):
        assert (out / f).exists(), f
    rows = list(csv.DictReader((out / "progress.csv").open()))
    assert [int(r["global_step"]) for r in rows] == [256, 512]
    assert all(0 <= float(r["eval_win_rate"]) <= 1 for r in rows)
    assert not list(out.glob("agent_*.pt"))
    # a run stopped after an update past its last checkpoint: that row is played again
    with (out / "progress.csv").open("a") as f:
        f.write("3,768,1.0\n")
    _run("experiments/ppo_selfplay.py", "--resume", str(out), "--total-steps", "1024",
         "--keep-agents", *common)  # fmt: skip
    rows = list(csv.DictReader((out / "progress.csv").open()))
    assert [int(r["update"]) for r in rows] == [1, 2, 3, 4]
    # --keep-agents: every checkpoint's player stays beside agent.pt
    assert sorted(p.name for p in out.glob("agent_*.pt")) == ["agent_1024.pt", "agent_768.pt"]

    from rummy_agents.ppo_agent import PPOAgent

    agent = PPOAgent(checkpoint=str(out / "agent.pt"))
    assert agent.meta["global_step"] == 1024 and agent.features == "gin_deadwood"


def test_ppo_selfplay_teacher_loss(tmp_path) -> None:
    """``--teacher simple`` adds an imitation term on a sample of the learner's decisions,
    logged with its weight (annealed to 0 by ``--teacher-until``) and the agreement rate."""
    out = tmp_path / "teach"
    _run("experiments/ppo_selfplay.py", "--num-envs", "32", "--num-steps", "8",
         "--total-steps", "1024", "--eval-every", "0", "--eval-games", "4", "--hidden", "32",
         "--teacher", "simple", "--teacher-samples", "64", "--teacher-until", "0.5",
         "--out", str(out), "--no-progress", "--no-tensorboard")  # fmt: skip
    rows = list(csv.DictReader((out / "progress.csv").open()))
    assert [float(r["teacher_coef"]) for r in rows] == [1.0, 0.5, 0.0, 0.0]
    assert all(0.0 <= float(r["teacher_agreement"]) <= 1.0 for r in rows[:2])
    assert float(rows[0]["teacher_loss"]) > 0.0 and rows[2]["teacher_loss"] == ""


def test_returns_to_go_per_seat_and_episode() -> None:
    """A recorded decision's return is its own seat's reward to the end of its episode; a
    decision whose episode has not ended when the record stops is marked unfinished."""
    from selfplay.advantages import returns_to_go as rtg

    # 2 games, 4 steps; game 0: seats 0,1,0 then the hand ends (seat 0 wins 1), then a new hand
    # that is still running; game 1: ends at step 1 (seat 1 wins 0.5), then a running hand
    rews = [np.zeros((2, 2)) for _ in range(4)]
    rews[2][0] = [1.0, -1.0]
    rews[1][1] = [-0.5, 0.5]
    dones = [np.array(d) for d in ([False, False], [False, True], [True, False], [False, False])]
    curs = [np.array(c) for c in ([0, 0], [1, 1], [0, 0], [1, 0])]
    where = [np.array([0, 1]), np.array([0, 1]), np.array([0]), np.array([0, 1])]
    ret, finished = rtg(rews, dones, curs, where)
    # record order: (t0 g0), (t0 g1), (t1 g0), (t1 g1), (t2 g0), (t3 g0), (t3 g1)
    np.testing.assert_allclose(ret, [1.0, -0.5, -1.0, 0.5, 1.0, 0.0, 0.0])
    assert finished.tolist() == [True, True, True, True, True, False, False]


def test_win_reward_pays_the_episode_outcome_only() -> None:
    from selfplay import advantages as mod
    from selfplay.config import Config

    out = mod.win_outcome(np.array([[3.0, -3.0], [-1.0, 1.0], [0.0, 0.0]]))
    np.testing.assert_allclose(out, [[1, -1], [-1, 1], [0, 0]])
    # more players: the best seats share +1, the rest share -1 (zero-sum)
    out = mod.win_outcome(np.array([[5.0, 1.0, 1.0], [2.0, 2.0, 0.0], [1.0, 1.0, 1.0]]))
    np.testing.assert_allclose(out, [[1, -0.5, -0.5], [0.5, 0.5, -1], [0, 0, 0]])
    cfg = Config(win_reward=True)
    rew = mod.TrainRewards(cfg, n=2, players=2)
    # game 0 scores during the episode (e.g. hands of a match), game 1 only at its end
    r = rew(np.array([[0.4, -0.4], [0.0, 0.0]]), np.array([False, False]))
    np.testing.assert_allclose(r, 0.0)
    r = rew(np.array([[-0.3, 0.3], [0.2, 0.0]]), np.array([True, True]))
    np.testing.assert_allclose(r, [[1, -1], [1, -1]])  # 0.1 vs -0.1; zero-sum 0.1 vs -0.1
    r = rew(np.array([[-0.2, 0.2], [0.0, 0.0]]), np.array([True, True]))  # new episodes
    np.testing.assert_allclose(r, [[-1, 1], [0, 0]])
    # without it: the game's rewards minus the seats' mean
    plain = mod.TrainRewards(Config(), n=1, players=2)
    np.testing.assert_allclose(plain(np.array([[3.0, 1.0]]), np.array([True])), [[1, -1]])


def test_ppo_selfplay_imitation_warm_start(tmp_path) -> None:
    """``--imitate-samples`` clones the teacher before PPO: the held-out agreement with
    ``simple`` rises over the passes and ends far above a random choice among the legal moves,
    and the run's curve starts with an evaluation at update 0."""
    out = tmp_path / "bc"
    _run("experiments/ppo_selfplay.py", "--num-envs", "64", "--num-steps", "8",
         "--total-steps", "512", "--eval-every", "0", "--eval-games", "8",
         "--teacher", "simple", "--imitate-samples", "12000", "--imitate-epochs", "3",
         "--teacher-coef", "0", "--seed", "3",
         "--out", str(out), "--no-progress", "--no-tensorboard")  # fmt: skip
    rows = list(csv.DictReader((out / "imitation.csv").open()))
    agree = [float(r["heldout_agreement"]) for r in rows]
    assert len(agree) == 3 and agree[-1] > agree[0] and agree[-1] > 0.7
    assert all(float(r["value_loss"]) < 1.0 for r in rows)
    progress = list(csv.DictReader((out / "progress.csv").open()))
    assert progress[0]["update"] == "0" and int(progress[0]["eval_games"]) == 8
    assert progress[1]["update"] == "1"
    # the cloned player is kept as an agent file of its own
    from rummy_agents.ppo_agent import PPOAgent
    from rummy_env import gin_rummy_v0

    env = gin_rummy_v0.env()
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    a = PPOAgent(checkpoint=str(out / "imitated.pt")).act(obs)
    assert obs["action_mask"][a] == 1
    with pytest.raises(ValueError, match="--teacher"):
        _run("experiments/ppo_selfplay.py", "--imitate-samples", "100", "--out", str(out))


def test_dagger_round_records_the_students_positions_with_the_teachers_moves() -> None:
    """A DAgger round: the student plays one seat, yet every recorded decision carries the
    teacher's (legal) move, and the positions differ from those of the teacher's own games."""
    import torch

    from rummy_agents.arena.registry import make_agent
    from rummy_agents.features import feature_size
    from rummy_agents.ppo_net import MaskedActorCritic
    from selfplay.cloning import teacher_games
    from selfplay.config import Config, finalize
    from selfplay.opponents import batched, policy_actions

    cfg = finalize(Config(game="gin_rummy", num_envs=8, teacher="simple"))
    teacher = batched(make_agent("simple", seed=0, game="gin_rummy"))
    x0, m0, a0, _ = teacher_games(cfg, teacher, 600, seed=5)
    torch.manual_seed(0)
    obs_size, num_actions = 225, 107
    student = MaskedActorCritic(obs_size + feature_size(cfg.features), num_actions, hidden=16)
    x1, m1, a1, r1 = teacher_games(cfg, teacher, 600, seed=5, student=student)
    assert m1[np.arange(a1.size), a1].all() and m0[np.arange(a0.size), a0].all()
    # same deals, but the student's moves lead elsewhere
    n = min(a0.size, a1.size)
    assert not np.array_equal(x0[:n], x1[:n])
    # the untrained student rarely plays the teacher's move where it chooses
    pred = policy_actions(student, x1.astype(np.float32), m1, greedy=True)
    assert (pred != a1).any() and np.isfinite(r1).all()
    # --win-reward: the same games, each decision's return is who won its hand
    win_cfg = finalize(Config(game="gin_rummy", num_envs=8, win_reward=True))
    teacher = batched(make_agent("simple", seed=0, game="gin_rummy"))
    teacher0 = batched(make_agent("simple", seed=0, game="gin_rummy"))
    _, _, a2, r2 = teacher_games(win_cfg, teacher, 600, seed=5)
    _, _, a3, r3 = teacher_games(cfg, teacher0, 600, seed=5)
    assert np.array_equal(a2, a3) and set(np.unique(r2)) <= {-1.0, 0.0, 1.0}
    np.testing.assert_array_equal(r2, np.sign(r3))


def test_ppo_selfplay_compiled_heuristic(tmp_path) -> None:
    """The compiled ``heuristic`` (it plays on the vector env's states) serves as training
    opponent, evaluation opponent and cloning teacher; as a per-update teacher of stored
    decisions it is refused with a message saying what to do."""
    out = tmp_path / "heur"
    _run("experiments/ppo_selfplay.py", "--game", "rummy51", "--num-envs", "16",
         "--num-steps", "8", "--total-steps", "256", "--eval-games", "4", "--hidden", "16",
         "--baseline", "heuristic", "--teacher", "heuristic", "--imitate-samples", "1500",
         "--imitate-epochs", "2", "--teacher-coef", "0", "--dagger-rounds", "1",
         "--dagger-samples", "800", "--features", "joker_cards_out",
         "--out", str(out), "--no-progress", "--no-tensorboard")  # fmt: skip
    rows = list(csv.DictReader((out / "imitation.csv").open()))
    # two passes of cloning, then one DAgger round of two passes over the grown record
    assert [r["round"] for r in rows] == ["0", "0", "1", "1"]
    # (decisions of games unfinished when the round stops are dropped: outcome unknown)
    assert int(rows[2]["samples"]) > int(rows[0]["samples"]) == int(rows[1]["samples"])
    assert rows[0]["new_agreement"] == "nan" and 0.0 <= float(rows[2]["new_agreement"]) <= 1.0
    assert float(rows[-1]["heldout_agreement"]) > 0.2
    assert (out / "imitated_round0.pt").exists() and (out / "imitated_round1.pt").exists()
    progress = list(csv.DictReader((out / "progress.csv").open()))
    assert progress[0]["update"] == "0" and int(progress[-1]["eval_games"]) == 4
    # the saved player computes the going-out features again from each observation
    from rummy_agents.ppo_agent import PPOAgent
    from rummy_env import rummy51_v1

    agent = PPOAgent(checkpoint=str(out / "agent.pt"))
    assert agent.features == "joker_cards_out"
    env = rummy51_v1.env()
    _plays_legally(agent, env, seed=3, steps=200)
    # --init-agent: cloning goes on from the saved player, which plays from the first round
    more = ["--game", "rummy51", "--num-envs", "16", "--num-steps", "8", "--total-steps", "128",
            "--eval-games", "4", "--hidden", "16", "--baseline", "heuristic",
            "--teacher", "heuristic", "--teacher-coef", "0", "--features", "joker_cards_out",
            "--init-agent", str(out / "agent.pt"), "--no-progress", "--no-tensorboard"]  # fmt: skip
    _run("experiments/ppo_selfplay.py", *more, "--imitate-samples", "800",
         "--imitate-epochs", "1", "--out", str(out / "more"))  # fmt: skip
    rows = list(csv.DictReader((out / "more" / "imitation.csv").open()))
    assert [r["round"] for r in rows] == ["0"] and 0.0 <= float(rows[0]["new_agreement"]) <= 1.0
    # wider hidden layers start from the saved player; narrower ones are refused
    _run("experiments/ppo_selfplay.py", *more, "--hidden", "32", "--imitate-samples", "800",
         "--imitate-epochs", "1", "--out", str(out / "wide"))  # fmt: skip
    assert PPOAgent(checkpoint=str(out / "wide" / "agent.pt")).meta["hidden"] == 32
    with pytest.raises(ValueError, match=r"another network: hidden=16 \(run: 8\)"):
        _run("experiments/ppo_selfplay.py", *more, "--hidden", "8", "--out", str(out / "z"))
    with pytest.raises(ValueError, match="--eval-games must be an integer >= 1, got 0"):
        _run("experiments/ppo_selfplay.py", *more, "--eval-games", "0")
    with pytest.raises(ValueError, match="--init-agent nowhere.pt: no such file"):
        _run("experiments/ppo_selfplay.py", *more, "--init-agent", "nowhere.pt")
    with pytest.raises(ValueError, match="--imitate-samples"):
        _run("experiments/ppo_selfplay.py", "--game", "rummy51", "--teacher", "heuristic",
             "--teacher-coef", "0", "--dagger-rounds", "1", "--out", str(out / "y"))  # fmt: skip
    with pytest.raises(ValueError, match="--teacher-coef 0"):
        _run("experiments/ppo_selfplay.py", "--game", "rummy51", "--teacher", "heuristic",
             "--total-steps", "64", "--num-envs", "8", "--out", str(out / "x"),
             "--no-progress", "--no-tensorboard")  # fmt: skip


def test_rule_based_baseline_of_each_game() -> None:
    """Each game is evaluated against its own rule-based agent, resolved for that game."""
    from rummy_agents.arena.registry import make_agent
    from selfplay.opponents import baseline_name

    expected = {
        "gin_rummy": "GinRummySimpleAgent",
        "five_hundred_rum": "FiveHundredRumGreedyAgent",
        "rummy51": "Rummy51GreedyAgent",
    }
    for game, cls in expected.items():
        agent = make_agent(baseline_name(game), seed=0, game=game)
        assert type(agent).__name__ == cls, game


def test_device_flag() -> None:
    import torch

    from selfplay.config import resolve_device as resolve

    assert resolve("cpu") == torch.device("cpu")
    assert resolve("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("tpu", "gpu0", f"cuda:{torch.cuda.device_count() + 3}"):
        with pytest.raises(ValueError, match="--device"):
            resolve(bad)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            resolve("cuda")


@pytest.mark.parametrize("game", ["five_hundred_rum", "rummy51"])
def test_ppo_selfplay_other_games(tmp_path, game: str) -> None:
    out = tmp_path / game
    _run("experiments/ppo_selfplay.py", "--game", game, "--num-envs", "16",
         "--num-steps", "8", "--total-steps", "256", "--eval-games", "4", "--hidden", "16",
         "--baseline", "random", "--device", "auto",
         "--out", str(out), "--no-progress", "--no-tensorboard")  # fmt: skip
    assert (out / "agent.pt").exists()


def test_train_sb3_smoke(tmp_path) -> None:
    pytest.importorskip("sb3_contrib")
    out = tmp_path / "sb3"
    _run("experiments/train_sb3.py", "--timesteps", "256", "--n-envs", "2", "--n-steps", "64",
         "--batch-size", "64", "--eval-games", "2", "--hidden", "16",
         "--out", str(out))  # fmt: skip
    assert (out / "model.zip").exists() and (out / "eval.json").exists()

    from rummy_agents.ppo_agent import PPOAgent

    agent = PPOAgent(checkpoint=str(out / "model.zip"))
    import rummy_env

    venv = rummy_env.make_vec("gin_rummy", 8, seed=0)
    obs, _ = venv.reset()
    acts = agent.act_batch(obs["observation"], obs["action_mask"])
    assert (obs["action_mask"][np.arange(8), acts] == 1).all()


@pytest.mark.parametrize(
    ("game", "old_set", "new_set"),
    [("rummy51", "joker_cards_plan", "joker_cards_melds"),
     ("five_hundred_rum", "joker_cards_takes", "joker_cards_discards"),
     ("five_hundred_rum", "joker_cards_discards", "joker_cards_planner")],
)  # fmt: skip
def test_init_agent_widens_a_network_to_a_new_plane(tmp_path, game, old_set, new_set) -> None:
    """An agent trained on a feature set starts a run on the set that extends it with its
    exact policy: the new plane's inputs get zero weights (trunk and card head) and its gate
    starts closed; once the gate opens, the plane adds to its actions' logits."""
    import torch

    import rummy_env
    from rummy_agents.features import add_features, card_layout, feature_size, meld_planes
    from rummy_agents.ppo_net import build_checkpoint, load_network
    from selfplay.network import init_weights

    venv = rummy_env.make_vec(game, 16, seed=2)
    obs, _ = venv.reset()
    rng = np.random.default_rng(0)
    xs, ms = [], []
    for _ in range(30):  # draws, melds and discards of random play
        xs.append(obs["observation"])
        ms.append(obs["action_mask"] == 1)
        obs, *_ = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in ms[-1]]))
    o, m = np.concatenate(xs), np.concatenate(ms)
    width, n_act = o.shape[1], m.shape[1]

    def meta(features: str) -> dict:
        planes, blocks, select = card_layout(game, features, width)
        out = {"game": game, "options": {}, "features": features,
               "obs_size": width + feature_size(features), "num_actions": n_act, "hidden": 16,
               "layers": 2, "card_inputs": planes, "card_actions": blocks,
               "card_select": select, "card_hidden": 8}  # fmt: skip
        if meld_planes(game, features, width):
            out["meld_planes"] = meld_planes(game, features, width)
        return out

    torch.manual_seed(0)
    old = load_network({**meta(old_set), "state_dict": None})
    torch.save(build_checkpoint(old, meta(old_set)), tmp_path / "old.pt")
    new_meta = meta(new_set)
    new = load_network({**new_meta, "state_dict": init_weights(tmp_path / "old.pt", new_meta)})
    x_old = torch.from_numpy(add_features(old_set, o))
    x_new = torch.from_numpy(add_features(new_set, o))
    assert (x_new[:, x_old.shape[1] :] > 0).any()  # the new plane marks something
    with torch.no_grad():
        a, va = old(x_old, torch.from_numpy(m))
        b, vb = new(x_new, torch.from_numpy(m))
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(va, vb)
    # once the new plane's gate opens, the actions it is aligned with gain it
    lo, off, w = new_meta["meld_planes"][-1]
    with torch.no_grad():
        new.meld_gate.bias[-1] = 3.0
        c, _ = new(x_new, torch.from_numpy(m))
    legal = torch.from_numpy(m[:, lo : lo + w])
    gain = (c - b)[:, lo : lo + w][legal]
    torch.testing.assert_close(gain, 3.0 * x_new[:, off : off + w][legal])
    # any other difference is refused (hidden layers may grow, not shrink)
    with pytest.raises(ValueError, match="another network: hidden=16"):
        init_weights(tmp_path / "old.pt", {**new_meta, "hidden": 8})


def test_ppo_selfplay_500_rum_with_meld_take_and_discard_planes(tmp_path) -> None:
    """A 500 Rum run on ``joker_cards_planner`` gets five gated planes (MELD, TAKE_DISCARD,
    two on DISCARD and greedy's planned melds on MELD), and its saved player never picks a
    masked action."""
    from rummy_agents.ppo_agent import PPOAgent
    from rummy_env import five_hundred_rum_v1

    out = tmp_path / "takes"
    _run("experiments/ppo_selfplay.py", "--game", "five_hundred_rum", "--num-envs", "16",
         "--num-steps", "8", "--total-steps", "256", "--eval-games", "4", "--hidden", "16",
         "--baseline", "heuristic", "--teacher", "heuristic", "--imitate-samples", "800",
         "--imitate-epochs", "1", "--teacher-coef", "0", "--features", "joker_cards_planner",
         "--out", str(out), "--no-progress", "--no-tensorboard")  # fmt: skip
    agent = PPOAgent(checkpoint=str(out / "agent.pt"))
    assert agent.features == "joker_cards_planner"
    assert [p[2] for p in agent.policy.meld_planes] == [685, 54, 52, 52, 685]
    env = five_hundred_rum_v1.env()
    _plays_legally(agent, env, seed=3, steps=300)


def test_teacher_moves_plays_each_game_once(capsys) -> None:
    """``teacher_moves.py`` plays every game to its end once and reports the learner's rate;
    every action id has its kind; unknown kinds are refused."""
    from rummy_env.encodings import five_hundred_rum as E

    mod = _script("teacher_moves")
    lay = E.Layout(2, 54)
    kind = mod.action_kinds(lay)
    names = {lay.action_name(a): kind[a] for a in range(lay.num_actions)}
    assert names["DRAW_STOCK"] == names["PASS"] == names["TAKE_DISCARD[3]"] == "draw"
    assert names["DISCARD[JK]"] == names["DISCARD[7h]"] == "discard"
    assert set(kind) == set(mod.KINDS)
    _run("experiments/teacher_moves.py", "--agent", "published",
         "--kinds", "meld,discard", "--games", "4")  # fmt: skip
    assert "of 4 games to 500" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        _run("experiments/teacher_moves.py", "--agent", "x.pt", "--kinds", "melds")


@pytest.mark.parametrize("sparse", [True, False])
def test_pool_and_evaluation_follow_the_runs_input_flags(monkeypatch, sparse: bool) -> None:
    """``--no-sparse-inputs`` reaches every network move, not only the learner's: the pool
    snapshot's samples and the greedy evaluation pack sparse rows only when the run does, and
    the moves are legal either way."""
    import torch

    import selfplay.opponents as opponents
    import selfplay.progress as progress
    from rummy_agents.features import feature_size
    from rummy_agents.ppo_net import MaskedActorCritic
    from selfplay.config import Config, finalize

    packed: list[int] = []
    original = opponents.sparse_rows

    def counting(x):
        packed.append(len(x))
        return original(x)

    monkeypatch.setattr(opponents, "sparse_rows", counting)
    cfg = finalize(Config(game="gin_rummy", num_envs=8, sparse_inputs=sparse))
    torch.manual_seed(0)
    width = 225 + feature_size(cfg.features)
    net = MaskedActorCritic(width, 107, hidden=16)
    opp = opponents.Opponents(4, 2, 0.0, 1.0, net, None, True, cfg.sparse_inputs)
    rng = np.random.default_rng(0)
    x = rng.random((4, width), dtype=np.float32) * (rng.random((4, width)) < 0.1)
    mask = np.zeros((4, 107), dtype=bool)
    mask[:, [0, 1, 5]] = True
    actions = np.zeros(4, dtype=np.int64)
    opp.act(actions, np.zeros(4, dtype=bool), x, mask, {}, None)
    assert set(actions.tolist()) <= {0, 1, 5}
    assert bool(packed) == sparse
    packed.clear()
    out = progress.evaluate(net, cfg, "random", games=4, seed=0)
    assert bool(packed) == sparse and 0.0 <= out["eval_win_rate"] <= 1.0


@pytest.mark.parametrize("game", ["gin_rummy", "rummy51"])
def test_rollout_packs_the_learners_rows_once(monkeypatch, game: str) -> None:
    """A rollout writes each step's features and masks into its storage and packs each step's
    nonzero inputs once: the pool snapshot reads the step's packing, and the learner's batch
    carries its rows' packing, equal to packing them again (``sparse_rows(x, rows)``)."""
    import torch

    import rummy_env
    import selfplay.opponents as opponents
    import selfplay.rollout as rollout
    from rummy_agents.features import feature_size
    from rummy_agents.ppo_net import MaskedActorCritic, sparse_rows
    from selfplay.config import Config, finalize

    features = "joker_cards" if game == "rummy51" else "gin_deadwood"
    cfg = finalize(Config(game=game, features=features, num_envs=8, num_steps=6))
    venv = rummy_env.make_vec(game, cfg.num_envs, seed=3)
    width = venv.single_observation_space["observation"].shape[0] + feature_size(features)
    torch.manual_seed(0)
    net = MaskedActorCritic(width, venv.single_action_space.n, hidden=16)
    opp = opponents.Opponents(cfg.num_envs, 2, 0.5, 0.5, net, None, True, True)
    monkeypatch.setattr(opponents, "sparse_rows", lambda *a: pytest.fail("packed again"))
    run = rollout.Rollout(cfg, venv, opp, width, torch.device("cpu"))
    run.reset(seed=3)
    run.collect(net)
    assert len(run.sparse) == cfg.num_steps
    flat = run.masks.reshape(-1, run.masks.shape[2])
    assert flat[np.arange(flat.shape[0]), run.acts.reshape(-1)].all()  # every move legal
    zeros = np.zeros(run.acts.shape, np.float32)
    batch = run.learner_batch(zeros, zeros)
    assert 0 < batch.rows.size < run.acts.size  # the pool seats are not the learner's
    idx, val = batch.sparse
    ref_idx, ref_val = sparse_rows(batch.x, batch.rows)
    dense = torch.zeros(batch.rows.size, width).scatter_add_(1, idx, val)
    ref = torch.zeros(batch.rows.size, width).scatter_add_(1, ref_idx, ref_val)
    assert torch.equal(dense, ref) and torch.equal(ref, torch.from_numpy(batch.x[batch.rows]))
    assert torch.equal(idx[:, : ref_idx.shape[1]], ref_idx)


def test_deadwood_shaping_reads_the_gin_deadwood_piece_wherever_it_sits() -> None:
    """The shaping score is minus the hand's deadwood / 100 with any set holding
    ``gin_deadwood`` (the same numbers with ``gin_deadwood_relative``), and None without it."""
    import rummy_env
    from rummy_agents.features import add_features
    from selfplay.advantages import shaping_score
    from selfplay.config import Config, finalize

    venv = rummy_env.make_vec("gin_rummy", 16, seed=2)
    obs, _ = venv.reset()
    rng = np.random.default_rng(2)
    for _ in range(6):
        obs, *_ = venv.step((rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(1))
    scores = []
    for features in ("gin_deadwood", "gin_deadwood_relative"):
        cfg = finalize(Config(game="gin_rummy", features=features))
        scores.append(shaping_score(cfg, add_features(features, obs["observation"], "gin_rummy")))
    np.testing.assert_array_equal(scores[0], scores[1])
    assert (scores[0] < 0).any()
    none = finalize(Config(game="gin_rummy", features="none"))
    assert shaping_score(none, obs["observation"]) is None


def test_card_head_only_keeps_the_card_actions_policy_rows_at_zero(tmp_path) -> None:
    """``--card-head-only``: after PPO updates (and a resume) the policy layer's rows of
    DISCARD[c] and KNOCK[c] are still exactly zero while the other rows and the card head
    learned, so those logits are the card head's; the agent file plays as usual. Without a card
    head the flag is refused."""
    import torch

    from rummy_agents.ppo_agent import PPOAgent
    from rummy_env.encodings import gin_rummy as G
    from selfplay.config import Config, finalize

    out = tmp_path / "head_only"
    common = ["--no-progress", "--no-tensorboard", "--out", str(out)]
    _run("experiments/ppo_selfplay.py", "--features", "gin_deadwood_relative",
         "--card-head-only", "--num-envs", "32", "--num-steps", "8", "--total-steps", "512",
         "--eval-every", "0", "--eval-games", "4", "--hidden", "32", *common)  # fmt: skip
    _run("experiments/ppo_selfplay.py", "--resume", str(out), "--total-steps", "1024",
         *common[:2])  # fmt: skip
    ckpt = torch.load(out / "agent.pt", map_location="cpu", weights_only=True)
    w, b = ckpt["state_dict"]["policy.weight"], ckpt["state_dict"]["policy.bias"]
    cards = list(range(G.DISCARD_BASE, G.MELD_BASE))
    assert len(cards) == 104 and (w[cards] == 0).all() and (b[cards] == 0).all()
    others = [a for a in range(w.shape[0]) if a not in cards]
    assert (w[others] != 0).any() and (ckpt["state_dict"]["card_out.weight"] != 0).any()
    agent = PPOAgent(checkpoint=str(out / "agent.pt"))
    assert agent.meta["global_step"] == 1024 and agent.features == "gin_deadwood_relative"
    with pytest.raises(ValueError, match="--card-head-only needs a card head"):
        finalize(Config(card_head_only=True, card_head=0))


@pytest.mark.parametrize(
    ("game", "old", "new", "hidden"),
    [("gin_rummy", "gin_deadwood", "gin_deadwood_relative", 16),
     ("rummy51", "joker_cards_plan", "joker_cards_melds", 16),
     ("gin_rummy", "gin_deadwood", "gin_deadwood", 40),
     ("rummy51", "joker_cards_plan", "joker_cards_melds", 24),
     ("five_hundred_rum", "", "", 24)],
)  # fmt: skip
def test_init_agent_widens_to_a_larger_feature_set_with_the_exact_policy(
    tmp_path, game: str, old: str, new: str, hidden: int
) -> None:
    """``--init-agent`` from an agent of the feature set a run's set extends (``WIDENS``), or
    of narrower hidden layers (16 here): the new inputs get zero weights, new planes zero
    gates, new hidden units fresh incoming weights that nothing old reads, so the widened
    network's logits and values equal the agent's on the same positions; and the weights
    that read the new units get gradients from the first update (so the units come alive)."""
    import torch

    import rummy_env
    from rummy_agents.features import add_features
    from selfplay.config import Config, finalize
    from selfplay.network import init_weights, network_meta, new_network, save_agent

    venv = rummy_env.make_vec(game, 8, seed=4)
    obs, _ = venv.reset()
    rng = np.random.default_rng(4)
    for _ in range(5):
        obs, *_ = venv.step((rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(1))
    o, mask = obs["observation"], torch.from_numpy(obs["action_mask"] == 1)
    width, actions = o.shape[1], venv.single_action_space.n
    torch.manual_seed(0)
    small_cfg = finalize(Config(game=game, features=old, hidden=16))
    small_meta = network_meta(small_cfg, width, actions)
    small = new_network(small_meta)
    with torch.no_grad():  # nonzero gates and heads, so that the check means something
        for p in small.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    save_agent(small, small_meta, 0, tmp_path / "old.pt")
    big_cfg = finalize(Config(game=game, features=new, hidden=hidden))
    big_meta = network_meta(big_cfg, width, actions)
    big = new_network(big_meta)
    big.load_state_dict(init_weights(str(tmp_path / "old.pt"), big_meta))
    x_old = torch.from_numpy(add_features(small_cfg.features, o, game))
    x_new = torch.from_numpy(add_features(big_cfg.features, o, game))
    assert x_new.shape[1] > x_old.shape[1] or hidden > 16
    with torch.no_grad():
        l0, v0 = small(x_old, mask)
    l1, v1 = big(x_new, mask)
    torch.testing.assert_close(l1.detach(), l0)
    torch.testing.assert_close(v1.detach(), v0)
    if hidden > 16:  # the new units are fresh (not dead), and what reads them learns at once
        (l1.masked_fill(~mask, 0.0).square().sum() + v1.square().sum()).backward()
        params = dict(big.named_parameters())
        for name in ("trunk.0.weight", "trunk.2.weight"):
            assert (params[name].detach()[16:] != 0).any(1).all(), name
        # the old second-layer units reading the new first-layer ones, and the heads
        assert (params["trunk.2.weight"].grad[:16, 16:] != 0).any()
        assert (big.policy.weight.grad[:, 16:] != 0).any()
        assert (big.value.weight.grad[:, 16:] != 0).any()


@pytest.mark.parametrize(("hidden", "layers"), [(8, 2), (32, 3), (32, 1)])
def test_init_agent_refuses_narrower_or_other_depth_networks(tmp_path, hidden, layers) -> None:
    """Hidden layers only grow, and only in width: a narrower run, or one with another number
    of layers, is refused naming what differs."""
    from selfplay.config import Config, finalize
    from selfplay.network import init_weights, network_meta, new_network, save_agent

    meta = network_meta(finalize(Config(hidden=16)), 225, 107)
    save_agent(new_network(meta), meta, 0, tmp_path / "old.pt")
    run = network_meta(finalize(Config(hidden=hidden, layers=layers)), 225, 107)
    with pytest.raises(ValueError, match="made for another network.*(hidden|layers)"):
        init_weights(str(tmp_path / "old.pt"), run)


@pytest.mark.parametrize("game", ["gin_rummy", "five_hundred_rum", "rummy51"])
def test_init_agent_reads_a_published_npz_agent_with_its_policy(game: str) -> None:
    """``--init-agent`` takes a published ``.npz`` agent (its int8 weights read back as
    float32, its JSON metadata's lists matching the run's tuples): the run's network then
    plays the published agent's moves."""
    import torch

    import rummy_env
    from rummy_agents.features import add_features
    from rummy_agents.ppo_agent import PPOAgent, load_checkpoint
    from rummy_agents.published import published_path
    from selfplay.config import Config, finalize
    from selfplay.network import init_weights, network_meta, new_network

    path = published_path(game)
    pub, _ = load_checkpoint(path)
    venv = rummy_env.make_vec(game, 16, seed=6)
    obs, _ = venv.reset()
    rng = np.random.default_rng(6)
    for _ in range(7):
        obs, *_ = venv.step((rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax(1))
    o, m = obs["observation"], obs["action_mask"]
    cfg = finalize(Config(game=game, features=pub["features"], hidden=pub["hidden"]))
    meta = network_meta(cfg, o.shape[1], venv.single_action_space.n)
    net = new_network(meta)
    net.load_state_dict(init_weights(str(path), meta))
    with torch.no_grad():
        logits, _ = net(
            torch.from_numpy(add_features(cfg.features, o, game)), torch.from_numpy(m == 1)
        )
    want = PPOAgent(checkpoint=str(path)).act_batch(o, m)
    np.testing.assert_array_equal(logits.argmax(1).numpy(), want)
    with pytest.raises(ValueError, match="another network: hidden="):
        init_weights(str(path), {**meta, "hidden": pub["hidden"] // 2})


def test_plot_curves_joins_resumed_runs_and_refuses_bad_specs(tmp_path) -> None:
    """``experiments/plot_curves.py``: a run's evaluation rows, joined across ``+`` files in
    order; a missing file, a file without evaluations or a run without a label is refused."""
    pytest.importorskip("matplotlib")
    head = "update,global_step,eval_win_rate,eval_win_lo,eval_win_hi\n"
    a, b, empty = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "empty.csv"
    a.write_text(head + "1,100,0.2,0.1,0.3\n2,200,,,\n")
    b.write_text(head + "3,300,0.4,0.3,0.5\n")
    empty.write_text(head + "1,100,,,\n")
    mod = sys.modules.get("plot_curves") or _script("plot_curves")
    steps, win, lo, hi = mod.read_curve(f"{a}+{b}")
    assert steps.tolist() == [100, 300] and win.tolist() == [0.2, 0.4]
    assert lo.tolist() == [0.1, 0.3] and hi.tolist() == [0.3, 0.5]
    out = tmp_path / "c.png"
    _run("experiments/plot_curves.py", "--out", str(out), f"run={a}+{b}", f"other={b}")
    assert out.stat().st_size > 1000
    with pytest.raises(ValueError, match="no such progress file"):
        mod.read_curve(str(tmp_path / "missing.csv"))
    with pytest.raises(ValueError, match="no evaluation rows"):
        mod.read_curve(str(empty))
    with pytest.raises(SystemExit):
        _run("experiments/plot_curves.py", "--out", str(out), str(a))


def test_search_distill_records_the_search_and_trains_on_it(tmp_path) -> None:
    """``search_distill.py collect`` records ppo_search's legal moves with the network's own
    move and the candidates it compared; ``train`` writes an agent that plays legally."""
    from rummy_agents.ppo_agent import PPOAgent
    from rummy_env import gin_rummy_v0

    data = tmp_path / "data.npz"
    _run("search_distill.py", "collect", "--procs", "1", "--hands", "3", "--worlds", "4",
         "--seed", "5", "--out", str(data))  # fmt: skip
    with np.load(data) as z:
        d = {k: z[k] for k in z.files}
    n = d["action"].size
    assert n > 0 and set(np.unique(d["hand"])) <= {0, 1, 2}
    rows = np.arange(n)
    assert d["mask"][rows, d["action"]].all() and d["mask"][rows, d["net"]].all()
    assert (d["mask"].sum(1) > 1).all(), "a decision without a choice was recorded"
    searched = d["cands"][:, 0] >= 0
    assert searched.any()
    # the network's move is always a candidate; a departure only where a search ran
    assert all(d["net"][i] in d["cands"][i] for i in np.flatnonzero(searched))
    assert (d["action"][~searched] == d["net"][~searched]).all()
    _run("search_distill.py", "train", str(data), "--epochs", "1", "--kl-coef", "1",
         "--out", str(tmp_path))  # fmt: skip
    _plays_legally(PPOAgent(checkpoint=tmp_path / "agent.pt", game="gin_rummy"),
                   gin_rummy_v0.env(), seed=2, steps=60)  # fmt: skip
    _run("search_distill.py", "train", str(data), "--epochs", "1", "--values-tau", "0.01",
         "--out", str(tmp_path / "v"))  # fmt: skip
    _plays_legally(PPOAgent(checkpoint=tmp_path / "v" / "agent.pt", game="gin_rummy"),
                   gin_rummy_v0.env(), seed=3, steps=60)  # fmt: skip


def _value_targets_reference(old_logp, mask, cands, values, tau):
    """``value_targets`` one row and one move at a time, from its definition."""
    out = np.zeros(mask.shape)
    for i in range(mask.shape[0]):
        legal = np.flatnonzero(mask[i])
        p = {a: math.exp(old_logp[i, a]) for a in legal}
        z = sum(p.values())
        p = {a: v / z for a, v in p.items()}
        scored = {int(a): float(v) for a, v in zip(cands[i], values[i], strict=True) if a >= 0}
        mass = sum(p[a] for a in scored)
        w = {a: p[a] * math.exp((v - max(scored.values())) / tau) for a, v in scored.items()}
        for a in legal:
            out[i, a] = mass * w[a] / sum(w.values()) if a in scored else p[a]
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_value_targets_move_the_candidates_mass_by_their_values(data) -> None:
    """The targets of ``search_distill.py train --values-tau`` equal a slow reference: the old
    probabilities, the candidates' total shared among them by ``p_old * exp(value / tau)``;
    rows sum to 1, nothing off the mask, unsearched rows unchanged; a huge ``tau`` keeps the
    old network, a tiny one gives the candidates' mass to the best."""
    sd = _script("search_distill")
    rows, actions = data.draw(st.integers(1, 6)), data.draw(st.integers(2, 9))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mask = rng.random((rows, actions)) < 0.6
    mask[np.arange(rows), rng.integers(0, actions, rows)] = True
    mask[:, 0] = True  # at least two legal moves a row
    mask[:, 1] = True
    logits = rng.normal(0, 3, (rows, actions))
    old_logp = np.where(mask, logits - np.log(np.exp(logits).sum(1, keepdims=True)), -1e8)
    cands = np.full((rows, 3), -1)
    values = rng.normal(0, 0.05, (rows, 3)).astype(np.float32)
    for i in range(rows):
        legal = rng.permutation(np.flatnonzero(mask[i]))
        k = data.draw(st.integers(0, min(3, legal.size)))  # 0: the search did not run
        cands[i, :k] = legal[:k]
    tau = data.draw(st.sampled_from([1e-3, 0.01, 0.1]))
    q = sd.value_targets(old_logp, mask, cands, values, tau)
    np.testing.assert_allclose(q, _value_targets_reference(old_logp, mask, cands, values, tau),
                               rtol=1e-9, atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(q.sum(1), 1.0)
    assert (q[~mask] == 0).all() and (q >= 0).all()
    p_old = np.where(mask, np.exp(old_logp), 0.0)
    p_old /= p_old.sum(1, keepdims=True)
    unsearched = cands[:, 0] < 0
    np.testing.assert_allclose(q[unsearched], p_old[unsearched])
    np.testing.assert_allclose(sd.value_targets(old_logp, mask, cands, values, 1e9), p_old)
    sharp = sd.value_targets(old_logp, mask, cands, values, 1e-9)
    for i in np.flatnonzero(~unsearched):
        k = int((cands[i] >= 0).sum())
        if k > 1 and np.unique(values[i, :k]).size == k:
            best = cands[i, int(np.argmax(values[i, :k]))]
            assert sharp[i, best] == pytest.approx(p_old[i, cands[i, :k]].sum())
