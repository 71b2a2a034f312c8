"""The evaluation line the training examples print
(``rummy_agents.integrations.evaluation_line``), as the tests parse it."""

from __future__ import annotations

import re

EVAL_LINE = re.compile(
    r"^evaluation (?P<label>.+?): (?P<episodes>\d+) episodes of (?P<setting>.+?) against "
    r"(?P<opponent>\S+): (?P<wins>\d+) wins, (?P<losses>\d+) losses, (?P<draws>\d+) draws"
    r"(?:, (?P<truncated>\d+) truncated)? \(win rate (?P<rate>\d+\.\d)%, "
    r"mean return (?P<mean>-?\d+\.\d+)\)$",
    re.M,
)
"""``evaluation LABEL: N episodes of SETTING against OPPONENT: W wins, L losses, D draws[, T
truncated] (win rate R%, mean return M)``."""
