"""The configuration of a self-play PPO run, and its command line.

:class:`Config` holds everything that defines a run; it is saved as ``config.json`` beside the
results and inside ``checkpoint.pt``. tyro turns it into the command line: each field is a flag
spelled with hyphens (``total_steps``: ``--total-steps``), a boolean is a pair of flags
(``--progress`` / ``--no-progress``), and the docstring under a field is its help. Two flags are
not fields: ``--option key=value`` (repeatable) sets a rule option, and ``--resume DIR``
continues a saved run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import torch
import tyro

from rummy_agents.arena.registry import parse_value
from rummy_agents.features import default_features
from selfplay.opponents import baseline_name

# rewards scaled to about [-1, 1] where the game offers it
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "gin_rummy": {"reward": "normalized"},
    "five_hundred_rum": {"reward": "normalized"},
    "rummy51": {"reward": "normalized"},
}


# ``--option key=value``, repeatable: the rule options given on the command line
RuleOptionFlags = Annotated[
    list[str], tyro.conf.UseAppendAction, tyro.conf.arg(metavar="KEY=VALUE")
]


@dataclass
class Config:
    """Everything that defines a run (saved as ``config.json`` beside the results)."""

    # -- the game ----------------------------------------------------------------------------
    game: str = "gin_rummy"
    """Game to train on: gin_rummy, five_hundred_rum or rummy51."""
    options: Annotated[dict[str, Any], tyro.conf.Suppress] = field(default_factory=dict)
    """Rule options (set with ``--option key=value``); the game's defaults fill the rest."""
    features: str = ""
    """Observation features the network reads; "" = the game's default set."""
    seed: int = 0

    # -- the games played, and by whom ---------------------------------------------------------
    total_steps: int = 20_000_000
    """Environment steps to train for (decisions of every seat)."""
    num_envs: int = 2048
    """Games stepped together."""
    num_steps: int = 32
    """Rollout length per game and update."""
    self_play_frac: float = 0.5
    """Share of the games where every seat is the current network."""
    pool_frac: float = 0.25
    """Share of the games against a past snapshot from the pool; the rest play the baseline."""
    pool_size: int = 8
    """Snapshots kept in the opponent pool."""
    pool_every: int = 20
    """Updates between pool snapshots."""
    baseline: str = ""
    """Agent the baseline games are played against; "" = the game's rule-based agent."""
    eval_baseline: str = ""
    """Agent the evaluations are played against; "" = the baseline."""

    # -- learning from a teacher ---------------------------------------------------------------
    teacher: str = ""
    """Agent to imitate (e.g. simple, greedy): the per-update loss and the cloning below."""
    teacher_coef: float = 1.0
    """Weight of the per-update imitation loss at the start, annealed to 0 at teacher_until."""
    teacher_until: float = 0.5
    """Fraction of the updates at which the imitation loss's weight reaches 0."""
    teacher_samples: int = 4096
    """Learner decisions labelled by the teacher per update."""
    imitate_samples: int = 0
    """Behaviour cloning before PPO: teacher decisions to learn from (0: none). They are held
    in memory with their masks: Gin ~1 KB each, 500 Rum ~5 KB, Rummy 51 ~10 KB."""
    imitate_epochs: int = 8
    """Passes over the cloning record (per round)."""
    imitate_lr: float = 1e-3
    """Learning rate of behaviour cloning."""
    dagger_rounds: int = 0
    """Rounds of DAgger after cloning: the student's own games, labelled by the teacher."""
    dagger_samples: int = 100_000
    """Decisions recorded per DAgger round."""
    init_agent: str = ""
    """Agent .pt/.npz whose network the run starts from (cloning then goes on from round 0);
    widened with its exact policy to a larger feature set or wider hidden layers."""

    # -- the network -------------------------------------------------------------------------
    hidden: int = 128
    """Width of the hidden layers."""
    layers: int = 2
    """Hidden layers of the shared trunk."""
    card_head: int = 16
    """Width of the shared per-card policy head (0: none)."""
    card_head_only: bool = False
    """The card-indexed actions (discard c, knock c) get their logits from the card head alone:
    their rows of the policy layer stay zero, so no action learns a per-card preference of its
    own (trained from scratch, those rows learned "discard high ranks" and broke melds)."""

    # -- PPO, and the rewards it trains on ----------------------------------------------------
    lr: float = 3e-4
    """Learning rate of the PPO updates."""
    anneal_lr: bool = True
    """Anneal the learning rate linearly to 0 over the run."""
    gamma: float = 1.0
    """Discount per decision of a seat."""
    gae_lambda: float = 0.95
    update_epochs: int = 2
    """Passes over each rollout."""
    num_minibatches: int = 8
    clip_coef: float = 0.2
    """PPO's clipping of the probability ratio."""
    ent_coef: float = 0.01
    """Weight of the entropy bonus."""
    legal_logits: bool = True
    """Compute the policy's logits for the legal actions only (``forward_legal``): the same
    policy, far less work with thousands of actions (500 Rum, Rummy 51); its samples draw other
    random numbers than the full softmax (``--no-legal-logits``, the runs before 2026-11-26)."""
    sparse_inputs: bool = True
    """On CPU, the first layer reads each row's nonzero inputs only (``sparse_rows``; about 4% of
    the joker games' inputs): the same network up to float rounding. Needs ``legal_logits``."""
    zero_sum: bool = True
    """Train on each seat's reward minus the mean of all seats'."""
    win_reward: bool = False
    """Train on who won each episode (+1 / -1), not on its points."""
    shaping: float = 1.0
    """Deadwood shaping weight at the start (Gin, gin_deadwood features), annealed to 0."""
    vf_coef: float = 0.5
    """Weight of the value loss."""
    max_grad_norm: float = 0.5

    # -- evaluation, files, machine ------------------------------------------------------------
    eval_every: int = 20
    """Updates between evaluations against eval_baseline; 0 = only at the end."""
    eval_games: int = 512
    """Games per evaluation."""
    checkpoint_every: int = 20
    """Updates between checkpoints."""
    keep_agents: bool = False
    """Also keep each checkpoint's player as agent_<step>.pt."""
    torch_threads: int = 1
    device: str = "cpu"
    """Torch device of the network: cpu, cuda, cuda:1, or auto."""
    numba_threads: int = 1
    out: str = ""
    """Run directory; "" = runs/ppo_<game>."""
    progress: bool = True
    """Show progress bars."""
    tensorboard: bool = True
    """Also log to TensorBoard (when installed)."""


@dataclass
class CommandLine:
    """The command line: the :class:`Config` flags, plus the two that are not fields."""

    config: Annotated[Config, tyro.conf.arg(name="")] = field(default_factory=Config)
    option: RuleOptionFlags = field(default_factory=list)
    """A rule option, e.g. --option reward=raw."""
    resume: Annotated[str | None, tyro.conf.arg(metavar="DIR")] = None
    """Run directory (or its checkpoint.pt) to continue: its saved config, with only the flags
    given here changed (e.g. --total-steps)."""


def parse_command_line(
    args: list[str] | None = None, description: str | None = None
) -> tuple[Config, str | None]:
    """The run's config from the command line (``sys.argv`` when ``args`` is None), and the
    run to resume (``--resume``) or None."""
    cli = tyro.cli(CommandLine, args=args, description=description)
    cfg = cli.config
    options = {}
    for kv in cli.option:
        k, _, v = kv.partition("=")
        options[k] = parse_value(v)
    if options:
        cfg.options = options
    return cfg, cli.resume


def resume_config(cfg: Config, resume: str | None) -> tuple[Config, dict[str, Any] | None]:
    """With ``resume`` (a run directory or its ``checkpoint.pt``): the saved run's config with
    the fields of ``cfg`` that differ from the defaults (the flags given) changed, and the
    saved training state; else ``cfg`` and None."""
    if not resume:
        return cfg, None
    path = Path(resume)
    path = path / "checkpoint.pt" if path.is_dir() else path
    state = torch.load(path, map_location="cpu", weights_only=False)
    given = {k: v for k, v in dataclasses.asdict(cfg).items() if v != getattr(Config(), k)}
    return Config(**{**state["config"], **given}), state


# (field, lowest value) of the counts finalize checks
_COUNTS = (
    ("total_steps", 1), ("num_envs", 1), ("num_steps", 1), ("pool_size", 1), ("pool_every", 1),
    ("teacher_samples", 1), ("hidden", 1), ("layers", 1), ("card_head", 0),
    ("update_epochs", 1), ("num_minibatches", 1), ("eval_every", 0), ("eval_games", 1),
    ("checkpoint_every", 1), ("torch_threads", 1), ("numba_threads", 1),
)  # fmt: skip


def finalize(cfg: Config) -> Config:
    """Fill the per-game defaults and check the flags that go together.

    Raises:
        ValueError: for a count below its lowest value (``--eval-games 0``), cloning or DAgger
            flags without what they need, ``--card-head-only`` without a card head, or a
            missing ``--init-agent`` file.
    """
    cfg.options = {**DEFAULT_OPTIONS.get(cfg.game, {}), **cfg.options}
    cfg.features = cfg.features or default_features(cfg.game)
    cfg.baseline = cfg.baseline or baseline_name(cfg.game)
    cfg.eval_baseline = cfg.eval_baseline or cfg.baseline
    cfg.out = cfg.out or f"runs/ppo_{cfg.game}"
    # counts named by their flag, checked before anything runs (a 0 used to fail deep inside)
    for name, low in _COUNTS:
        value = getattr(cfg, name)
        if value < low:
            flag = "--" + name.replace("_", "-")
            raise ValueError(f"{flag} must be an integer >= {low}, got {value}")
    if cfg.imitate_samples < 0 or cfg.imitate_epochs < 1:
        raise ValueError("--imitate-samples must be >= 0 and --imitate-epochs >= 1")
    if cfg.imitate_samples and not cfg.teacher:
        raise ValueError("--imitate-samples needs --teacher AGENT (the player to imitate)")
    if cfg.dagger_rounds < 0 or cfg.dagger_samples < 1:
        raise ValueError("--dagger-rounds must be >= 0 and --dagger-samples >= 1")
    if cfg.dagger_rounds and not cfg.imitate_samples:
        raise ValueError("--dagger-rounds continues cloning: it needs --imitate-samples N")
    if cfg.card_head_only and not cfg.card_head:
        raise ValueError("--card-head-only needs a card head: --card-head must be >= 1")
    if cfg.init_agent and not Path(cfg.init_agent).is_file():
        raise ValueError(f"--init-agent {cfg.init_agent}: no such file")
    return cfg


def resolve_device(name: str) -> torch.device:
    """The torch device of ``--device``: ``"auto"`` is CUDA when available, else the CPU.

    Raises:
        ValueError: for a device name torch does not know, or a CUDA device this machine does
            not have.
    """
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(name)
    except RuntimeError as e:
        raise ValueError(f"--device {name!r}: {e}") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"--device {name!r}: this torch build or machine has no CUDA device")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"--device {name!r}: only {torch.cuda.device_count()} CUDA devices")
    elif dev.type != "cpu":
        raise ValueError(f"--device {name!r}: use cpu, cuda, cuda:N or auto")
    return dev
