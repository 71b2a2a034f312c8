"""A game record as one self-contained HTML page: the table's picture before every decision,
stepped through with buttons, a slider or the arrow keys (``rummy-env replay FILE --html OUT``).

The page holds every frame as an SVG drawn by ``rummy_env.render.picture`` (the same drawing as
``render_mode="rgb_array"``) and a few lines of JavaScript; it loads nothing from anywhere.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>__TITLE__</title>
<style>
body { background: #123524; color: #f4f4f0; font-family: sans-serif; margin: 16px; }
h1 { font-size: 20px; margin: 0 0 8px; color: #f2c14e; }
#meta { font-size: 13px; color: #cfe3d6; margin-bottom: 8px; }
#frame svg { width: 100%; max-width: 1280px; height: auto; display: block; }
#bar { display: flex; gap: 8px; align-items: center; margin: 8px 0; max-width: 1280px; }
#bar button { font-size: 15px; padding: 4px 10px; }
#slider { flex: 1; }
#caption { font-size: 16px; min-height: 22px; }
</style>
</head>
<body>
<h1>__TITLE__</h1>
<div id="meta">__META__</div>
<div id="bar">
<button id="first" title="first (Home)">|&#x25C0;</button>
<button id="prev" title="back (Left)">&#x25C0;</button>
<button id="next" title="forward (Right)">&#x25B6;</button>
<button id="last" title="last (End)">&#x25B6;|</button>
<input id="slider" type="range" min="0" value="0">
<span id="count"></span>
</div>
<div id="caption"></div>
<div id="frame"></div>
<script>
const FRAMES = __FRAMES__;
const CAPTIONS = __CAPTIONS__;
let k = 0;
const slider = document.getElementById("slider");
slider.max = FRAMES.length - 1;
function show(i) {
  k = Math.max(0, Math.min(FRAMES.length - 1, i));
  document.getElementById("frame").innerHTML = FRAMES[k];
  document.getElementById("caption").textContent = CAPTIONS[k];
  document.getElementById("count").textContent = (k + 1) + " / " + FRAMES.length;
  slider.value = k;
}
document.getElementById("first").onclick = () => show(0);
document.getElementById("prev").onclick = () => show(k - 1);
document.getElementById("next").onclick = () => show(k + 1);
document.getElementById("last").onclick = () => show(FRAMES.length - 1);
slider.oninput = () => show(Number(slider.value));
document.addEventListener("keydown", (e) => {
  if (e.key === "ArrowLeft") show(k - 1);
  else if (e.key === "ArrowRight") show(k + 1);
  else if (e.key === "Home") show(0);
  else if (e.key === "End") show(FRAMES.length - 1);
});
show(0);
</script>
</body>
</html>
"""


# Inside <script>, "</script" ends the element and "<!--" or "<script" change how the HTML
# parser reads the rest, whatever JavaScript makes of them. These characters can only be in the
# JSON's strings, where \uXXXX stands for them: the script then holds none of them at all.
# U+2028 and U+2029 end a line in older JavaScript (ensure_ascii escapes them already).
_SCRIPT_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


_SLOT = re.compile("__TITLE__|__META__|__FRAMES__|__CAPTIONS__")


def script_json(value: Any) -> str:
    r"""``value`` as JSON that is safe to put inside an HTML ``<script>`` element as it is:
    no ``<``, ``>``, ``&``, U+2028 or U+2029 (written ``\u003c`` ...), nor any other non-ASCII
    character; ``json.loads`` reads it back to ``value``.
    """
    return json.dumps(value).translate(_SCRIPT_ESCAPES)


def frames_page(title: str, meta: str, frames: list[str], captions: list[str]) -> str:
    """An HTML page stepping through ``frames`` (SVG documents) with their ``captions``.

    Raises:
        TypeError: for a title or meta that is not a string, or frames or captions that are
            not lists of strings.
        ValueError: unless there are as many captions as frames, and at least one.
    """
    for name, text in (("title", title), ("meta", meta)):
        if not isinstance(text, str):
            raise TypeError(f"{name} must be a string, got {type(text).__name__}")
    for name, items in (("frames", frames), ("captions", captions)):
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise TypeError(f"{name} must be a list of strings")
    if len(frames) != len(captions) or not frames:
        raise ValueError(f"need as many captions as frames (at least one), got {len(frames)} "
                         f"frames and {len(captions)} captions")  # fmt: skip
    parts = {
        "__TITLE__": html.escape(title),
        "__META__": html.escape(meta),
        "__FRAMES__": script_json(frames),
        "__CAPTIONS__": script_json(captions),
    }
    # one pass: a label that reads "__FRAMES__" is text, not a place to fill
    return _SLOT.sub(lambda m: parts[m.group(0)], _PAGE)


def record_page(record: Any, view: str | None = None) -> tuple[str, Any]:
    """Replay a game record (checking it, as ``rummy_env.game_records.replay``) into a page of
    the table before each decision and after the last, in the referee's view or ``view``'s
    (a seat then sees the other seats' moves by their public names).

    Args:
        record: a ``GameRecord`` or the path of a ``.jsonl`` record.
        view: ``None`` (the referee's view) or one of the record's agents.

    Returns:
        The page and the replay's ``ReplayResult``.

    Raises:
        ValueError: for a record the replay refuses (a field of the wrong type raises
            ``ArgumentTypeError``, both a ``TypeError`` and a ``ValueError``), or a ``view``
            that is not one of its agents.
    """
    from rummy_env.game_records import GameRecord, check_record, read_record, replay
    from rummy_env.render.picture import svg

    # checked first: nothing below reads a field the schema has not vouched for
    record = check_record(record) if isinstance(record, GameRecord) else read_record(record)
    if view is not None and (not isinstance(view, str) or view not in record.agents):
        raise ValueError(f"view must be one of {record.agents} or None, got {view!r:.80}")
    frames: list[str] = []
    captions: list[str] = []

    def grab(env: Any, i: int, agent: str, action: int) -> None:
        tv = env.table_view(view, names=record.labels)
        frames.append(svg(tv))
        if not agent:
            captions.append(f"after the last decision ({i})")
            return
        name = env.action_name(action) if view in (None, agent) else env.public_action_name(action)
        label = record.labels.get(agent, "")
        who = f"{agent} ({label})" if label else agent
        captions.append(f"decision {i + 1}: {who} plays {name}")

    result = replay(record, on_step=grab)
    returns = ", ".join(f"{a} {r:+g}" for a, r in result.returns.items())
    captions[-1] += f" | outcome {result.outcome}; returns {returns}"
    opts = ", ".join(f"{k}={v}" for k, v in record.options.items()) or "default rules"
    seen = f"{view}'s view" if view else "referee's view"
    meta = f"{record.env or record.game}, {opts}; seed {record.seed}; {seen}"
    labels = ", ".join(f"{a}: {n}" for a, n in record.labels.items() if n)
    title = f"{record.game} replay" + (f" ({labels})" if labels else "")
    return frames_page(title, meta, frames, captions), result


def write_record_page(record: Any, out: str | Path, view: str | None = None) -> Any:
    """Write ``record_page`` to ``out`` (UTF-8); returns the replay's result.

    Raises:
        ValueError: as :func:`record_page` (nothing is written then).
        OSError: if ``out`` cannot be written (a folder, a missing folder, no permission, too
            long a name).
    """
    page, result = record_page(record, view)
    Path(out).write_text(page, encoding="utf-8")
    return result
