"""Game records: :func:`parse_record` reads one, :class:`ReplayView` checks it by replaying it
and steps through it in any seat's view, and :func:`confined` and :func:`list_records` keep
the records folder's files (and nothing outside it) within reach.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import numpy as np

from rummy_agents.arena.play import make_env
from rummy_agents.web.catalog import REFEREE, TITLES
from rummy_agents.web.errors import ApiError, one_line
from rummy_agents.web.games import hand_infos, hands_played
from rummy_agents.web.limits import MAX_LISTED_RECORDS, MAX_RECORD_BYTES
from rummy_env.game_records import GameRecord, read_record, replay


class ReplayView:
    """A checked record, stepped through with one env: forwards a step at a time, backwards by
    dealing again and replaying up to the step (every step is cheap).

    Args:
        rid: the replay's id.
        record: the record.
        source: where it came from (a path under the records folder, or an upload's name).

    Raises:
        ApiError: 422 for a record that does not replay (:func:`rummy_env.game_records.replay`).
    """

    def __init__(self, rid: str, record: GameRecord, source: str, mem_key: int = 0) -> None:
        self.mem_key = mem_key
        self.id = rid
        self.record = record
        self.source = source
        self.steps: list[dict[str, Any]] = []
        self.hands: list[dict[str, Any]] = []
        seen = [0]

        def note(env: Any, i: int, agent: str, action: int) -> None:
            played = hands_played(env)
            if played > seen[0]:
                seen[0] = played
                self.hands.append(
                    {"number": len(self.hands) + 1, "frame": i, "infos": hand_infos(env)}
                )
            if agent:
                self.steps.append(
                    {
                        "step": i,
                        "agent": agent,
                        "label": record.labels.get(agent, ""),
                        "name": env.action_name(action),
                        "public": env.public_action_name(action),
                    }
                )

        try:
            res = replay(record, on_step=note)
        except (ValueError, TypeError) as e:  # the record's own checks name the field
            raise ApiError(422, f"{source}: {one_line(e)}") from None
        self.result = {
            "returns": res.returns,
            "outcome": res.outcome,
            "finished": res.finished,
            "matches": res.matches,
            "recorded": record.result,
        }
        self.env = make_env(record.game, record.options)
        self.views = [REFEREE, *self.env.possible_agents]
        self.pos = -1  # not dealt yet
        self.lock = threading.Lock()

    def meta(self) -> dict[str, Any]:
        """The record's game, seats, steps and result, for the page."""
        rec = self.record
        return {
            "id": self.id,
            "source": self.source,
            "game": rec.game,
            "title": TITLES.get(rec.game, rec.game),
            "options": rec.options,
            "seed": rec.seed,
            "agents": rec.agents,
            "labels": rec.labels,
            "views": self.views,
            "steps": self.steps,
            "frames": len(self.steps) + 1,
            "hands": self.hands,
            "result": self.result,
        }

    def _goto(self, step: int) -> None:
        env = self.env
        if step < self.pos or self.pos < 0:
            opts = None
            if self.record.reset_options is not None:
                opts = dict(self.record.reset_options)
                if "deck" in opts:
                    opts["deck"] = np.asarray(opts["deck"], dtype=np.int64)
            env.reset(seed=self.record.seed, options=opts)
            self.pos = 0
        while self.pos < step:
            env.step(self.record.steps[self.pos][1])
            self.pos += 1

    def frame(self, step: Any, view: Any) -> dict[str, Any]:
        """The table before decision ``step`` (after the last one for ``step`` = the number of
        steps) in ``view``, with that decision and, at the end, the result.

        Raises:
            ApiError: 400 for a step or view that is not one of the record's.
        """
        n = len(self.steps)
        try:
            i = int(step)
        except (TypeError, ValueError):
            raise ApiError(400, f"step must be an integer 0..{n}, got {step!r:.40}") from None
        if not 0 <= i <= n:
            raise ApiError(400, f"step must be 0..{n} (the record has {n} steps), got {i}")
        if view not in self.views:
            raise ApiError(400, f"unknown view {view!r:.40}; views: {', '.join(self.views)}")
        seat = None if view == REFEREE else view
        self._goto(i)
        table = self.env.table_view(seat)
        nxt = None
        if i < n:
            s = self.steps[i]
            shown = s["name"] if seat in (None, s["agent"]) else s["public"]
            nxt = {"agent": s["agent"], "label": s["label"], "name": shown}
        hand = next((h for h in self.hands if h["frame"] == i), None)
        return {
            "step": i,
            "frames": n + 1,
            "view": view,
            "svg": self.env.render_picture(seat, fmt="svg"),
            "table": dataclasses.asdict(table),
            "next": nxt,
            "last": table.last_action,
            "hand": hand,
            "result": self.result if i == n else None,
        }


def confined(root: Path, rel: Any) -> Path:
    """The file ``rel`` names under ``root``, refusing anything that could leave it.

    Raises:
        ApiError: 400 for a path that is not relative, climbs (``..``), or resolves (through a
            link) outside ``root``, or is not a ``.jsonl`` file; 404 for no such file.
    """
    if not isinstance(rel, str) or not rel.strip() or "\x00" in rel:
        raise ApiError(400, "path must be a record's path under the records folder")
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or rel[:1] in "\\/":
        raise ApiError(400, f"path {rel!r:.80} must be relative to the records folder")
    parts = re.split(r"[\\/]", rel)
    if ".." in parts:
        raise ApiError(400, f"path {rel!r:.80} may not contain '..'")
    if not rel.endswith(".jsonl"):
        raise ApiError(400, f"path {rel!r:.80} is not a record (.jsonl)")
    base = root.resolve()
    path = (base / rel).resolve()
    if not path.is_relative_to(base):
        raise ApiError(400, f"path {rel!r:.80} leads outside the records folder")
    if not path.is_file():
        raise ApiError(404, f"no record {rel!r:.80} in the records folder")
    return path


def list_records(root: Path) -> tuple[list[str], bool]:
    """The ``.jsonl`` files under ``root`` (relative POSIX paths, sorted, links that leave it
    left out) and whether the list was cut at :data:`MAX_LISTED_RECORDS`.
    """
    base = root.resolve()
    found = []
    for p in sorted(base.rglob("*.jsonl")):
        try:
            if not p.is_file() or not p.resolve().is_relative_to(base):
                continue
        except OSError:
            continue
        found.append(p.relative_to(base).as_posix())
        if len(found) > MAX_LISTED_RECORDS:
            return found[:MAX_LISTED_RECORDS], True
    return found, False


def parse_record(text: str, source: str) -> GameRecord:
    """A record from its text.

    Raises:
        ApiError: 413 for a record over :data:`MAX_RECORD_BYTES`, 422 for a malformed one (the
            message names the line).
    """
    if len(text.encode("utf-8", "surrogatepass")) > MAX_RECORD_BYTES:
        raise ApiError(413, f"{source}: the record is over {MAX_RECORD_BYTES} bytes")
    try:
        # JSON Lines ends a line at "\n" only (str.splitlines() also breaks at U+2028, which a
        # JSON string may hold)
        return read_record(text.split("\n"))
    except (ValueError, TypeError) as e:  # the record's checks name the line and the field
        msg = one_line(e)
        if msg.startswith("record: "):
            msg = msg[len("record: ") :]
        raise ApiError(422, f"{source}: {msg}") from None
