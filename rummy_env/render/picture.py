"""Pictures of the table: one layout, drawn as SVG (pages, the browser) or as pixels
(``render_mode="rgb_array"``).

``layout(view)`` places a ``TableView`` on a 1280 x 720 canvas as a list of shapes (rounded
rectangles, polygons, circles, text); ``to_svg`` and ``to_array`` draw those shapes and nothing
else, so both agree by construction. Suit symbols are drawn as polygons, not font glyphs: the
picture looks the same with any font. Pixels come from Pillow, a wheel on every platform with its
own FreeType and a bundled font (no system libraries, no font files to ship); an SVG rasteriser
would have needed cairo or a Rust wheel and the system's fonts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import numpy as np

from rummy_env.render.table import HIDDEN, JOKER, Card, TableView, card_text

WIDTH, HEIGHT = 1280, 720

# colours
FELT = "#1d5c3a"
FELT_DARK = "#164a2e"
PANEL = "#24704a"
PANEL_ACT = "#2f8a5b"
GOLD = "#f2c14e"
WHITE = "#ffffff"
INK = "#1a1a1a"
RED = "#c8102e"
BLUE_BACK = "#27408b"
BLUE_LINE = "#8aa2e0"
JOKER_INK = "#6a1b9a"
TEXT = "#f4f4f0"
MUTED = "#cfe3d6"


@dataclass(frozen=True)
class Shape:
    """One drawing instruction: ``kind`` is ``rect`` (x, y, w, h, radius), ``poly`` (points),
    ``circle`` (cx, cy, r), ``suit`` (suit, cx, cy, size: ``suit_parts`` scaled) or ``text``
    (x, y, size, anchor ``start|middle|end``, bold).
    """

    kind: str
    geom: tuple
    fill: str = ""
    stroke: str = ""
    width: float = 1.0
    text: str = ""


class Canvas:
    """Collects shapes (the layout's output)."""

    def __init__(self) -> None:
        self.shapes: list[Shape] = []

    def rect(self, x, y, w, h, fill="", stroke="", radius=0.0, width=1.0) -> None:
        """A rectangle (rounded by ``radius``), filled and/or outlined."""
        self.shapes.append(Shape("rect", (x, y, w, h, radius), fill, stroke, width))

    def poly(self, points, fill) -> None:
        """A filled polygon."""
        self.shapes.append(Shape("poly", tuple(points), fill))

    def circle(self, cx, cy, r, fill) -> None:
        """A filled circle."""
        self.shapes.append(Shape("circle", (cx, cy, r), fill))

    def text(self, x, y, text, size, fill=TEXT, anchor="start", bold=False) -> None:
        """Text on the baseline at ``y``, anchored at ``x`` by its start, middle or end."""
        self.shapes.append(Shape("text", (x, y, size, anchor, bold), fill, text=text))


# --- suits and cards ----------------------------------------------------------------------------


@cache
def _heart_unit(flip: bool) -> tuple[tuple[float, float], ...]:
    """A heart in a unit box centred at 0 (``flip``: point up, for the spade)."""
    pts = []
    for i in range(48):
        t = 2 * math.pi * i / 48
        x = 16 * math.sin(t) ** 3
        y = -(13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t))
        pts.append((x / 34, (-y if flip else y) / 34 + (0.08 if flip else -0.04)))
    return tuple(pts)


@cache
def suit_parts(suit: int) -> tuple[tuple, ...]:
    """Suit ``suit`` (0 clubs, 1 diamonds, 2 hearts, 3 spades) as shapes of a unit-size symbol
    centred at 0: ``("poly", points)`` and ``("circle", cx, cy, r)``.
    """
    if suit == 1:
        return (("poly", ((0, -0.5), (0.38, 0), (0, 0.5), (-0.38, 0))),)
    if suit == 2:
        return (("poly", _heart_unit(False)),)
    if suit == 3:
        heart = tuple((x, y - 0.08) for x, y in _heart_unit(True))
        return (("poly", heart), ("poly", ((0, 0.1), (0.2, 0.5), (-0.2, 0.5))))
    return (
        ("circle", 0, -0.22, 0.22),
        ("circle", -0.23, 0.08, 0.22),
        ("circle", 0.23, 0.08, 0.22),
        ("poly", ((0, 0), (0.17, 0.5), (-0.17, 0.5))),
    )


def suit_colour(suit: int) -> str:
    """Red for diamonds and hearts, black for clubs and spades."""
    return RED if suit in (1, 2) else INK


def suit_shape(c: Canvas, suit: int, cx: float, cy: float, size: float) -> None:
    """Draw suit ``suit`` centred at (cx, cy), ``size`` pixels tall."""
    c.shapes.append(Shape("suit", (suit, cx, cy, size), suit_colour(suit)))


def _star(c: Canvas, cx: float, cy: float, r: float, colour: str) -> None:
    pts = []
    for i in range(10):
        a = -math.pi / 2 + i * math.pi / 5
        rr = r if i % 2 == 0 else r * 0.45
        pts.append((cx + rr * math.cos(a), cy + rr * math.sin(a)))
    c.poly(pts, colour)


def draw_card(c: Canvas, x: float, y: float, w: float, card: Card, lift: bool = False) -> None:
    """Draw a card of width ``w`` (height 1.4 w) with its top-left corner at (x, y)."""
    h = w * 1.4
    rad = w * 0.1
    if card.face == HIDDEN:
        c.rect(x, y, w, h, BLUE_BACK, WHITE, rad, max(1.0, w / 30))
        c.rect(x + w * 0.12, y + w * 0.12, w * 0.76, h - w * 0.24, "", BLUE_LINE, rad / 2)
        return
    c.rect(x, y, w, h, WHITE, GOLD if lift else "#9a9a9a", rad, 3.0 if lift else 1.0)
    size = w * 0.36
    if card.face >= JOKER:
        # the stand-in goes under "JK" in the corner, which overlapping cards leave visible
        c.text(x + w * 0.07, y + size * 0.95, "JK", size * 0.85, JOKER_INK, bold=True)
        _star(c, x + w * 0.62, y + h * 0.62, w * 0.26, JOKER_INK)
        if card.stand_in:
            stand_rank = card.stand_in[0].replace("T", "10")
            c.text(x + w * 0.07, y + size * 2.0, stand_rank, size * 0.8, JOKER_INK, bold=True)
            if len(card.stand_in) > 1:
                stand_suit = "cdhs".index(card.stand_in[1])
                suit_shape(c, stand_suit, x + w * 0.1 + size * 0.3, y + size * 2.55, size * 0.55)
        return
    suit, rank = divmod(card.face, 13)
    colour = RED if suit in (1, 2) else INK
    label = "10" if rank == 9 else "A23456789TJQK"[rank]
    c.text(x + w * 0.07, y + size * 0.95, label, size, colour, bold=True)
    suit_shape(c, suit, x + w * 0.07 + size * 0.35, y + size * 1.55, size * 0.7)
    if h >= 56:
        suit_shape(c, suit, x + w * 0.58, y + h * 0.64, w * 0.5)


def card_row(
    c: Canvas, x: float, y: float, avail: float, w: float, groups: list[list[Card]], gap: float
) -> None:
    """Cards of ``groups`` left to right in ``avail`` pixels, overlapping as needed, a gap
    between groups.
    """
    n = sum(len(g) for g in groups)
    if not n:
        return
    gaps = gap * (len(groups) - 1)
    stride = w * 1.08 if n == 1 else min(w * 1.08, (avail - w - gaps) / (n - 1))
    for gi, g in enumerate(groups):
        for card in g:
            draw_card(c, x, y, w, card)
            x += stride
        if gi < len(groups) - 1:
            x += gap


def pile_grid(n: int, avail_w: float, avail_h: float, w: float) -> tuple[float, int, float]:
    """Card width, cards per row and stride for a pile of ``n`` cards in rows filling
    ``avail_w`` x ``avail_h`` (the largest cards, up to ``w``, that show a corner of each).
    """
    if n <= 1:
        return w, 1, w * 1.08
    for pw in (w, 48.0, 42.0, 36.0, 31.0, 27.0, 23.0, 20.0, 17.0):
        if pw > w:
            continue
        per_row = max(1, int((avail_w - pw) // (pw * 0.42)) + 1)
        rows = math.ceil(n / per_row)
        if rows * pw * 1.4 + (rows - 1) * 5 <= avail_h or pw == 17.0:
            per_row = math.ceil(n / rows)  # even rows
            stride = min(pw * 1.08, (avail_w - pw) / max(1, per_row - 1))
            return pw, per_row, stride
    raise AssertionError("unreachable")


# --- the table ----------------------------------------------------------------------------------


def layout(view: TableView, width: int = WIDTH, height: int = HEIGHT) -> Canvas:
    """Place a table view on a ``width`` x ``height`` canvas (designed for 1280 x 720)."""
    if (width, height) != (WIDTH, HEIGHT):
        return _scaled(layout(view), width / WIDTH, height / HEIGHT)
    c = Canvas()
    c.rect(0, 0, WIDTH, HEIGHT, FELT)
    # header: title, facts, whose view
    c.rect(0, 0, WIDTH, 44, FELT_DARK)
    c.text(16, 30, view.title, 24, GOLD, bold=True)
    c.text(34 + 16.5 * len(view.title), 29, "  |  ".join(view.info), 16, TEXT)
    who = f"{view.viewer}'s view" if view.viewer else "referee's view (all cards face up)"
    c.text(WIDTH - 16, 29, who, 15, MUTED, anchor="end")
    _seats(c, view)
    _boards(c, view)
    if view.melds:
        _melds(c, view)
    # footer: last action, result
    c.rect(0, HEIGHT - 34, WIDTH, 34, FELT_DARK)
    if view.last_action:
        c.text(16, HEIGHT - 11, "last: " + view.last_action, 16, GOLD)
    if view.result:
        c.text(WIDTH - 16, HEIGHT - 11, view.result, 15, TEXT, anchor="end")
    return c


def _scaled(inner: Canvas, sx: float, sy: float) -> Canvas:
    """The canvas stretched by (sx, sy); sizes (radii, text, lines) scale by the smaller."""
    c = Canvas()
    s = min(sx, sy)
    for sh in inner.shapes:
        g = sh.geom
        geom: tuple[Any, ...]
        if sh.kind == "rect":
            geom = (g[0] * sx, g[1] * sy, g[2] * sx, g[3] * sy, g[4] * s)
        elif sh.kind == "poly":
            geom = tuple((x * sx, y * sy) for x, y in g)
        elif sh.kind == "circle":
            geom = (g[0] * sx, g[1] * sy, g[2] * s)
        elif sh.kind == "suit":
            geom = (g[0], g[1] * sx, g[2] * sy, g[3] * s)
        else:
            geom = (g[0] * sx, g[1] * sy, g[2] * s, g[3], g[4])
        c.shapes.append(Shape(sh.kind, geom, sh.fill, sh.stroke, sh.width * s, sh.text))
    return c


LEFT_X, LEFT_W = 14, 800
RIGHT_X = LEFT_X + LEFT_W + 14
RIGHT_W = WIDTH - RIGHT_X - 14
TOP, BOTTOM = 54, HEIGHT - 44


def _seats(c: Canvas, view: TableView) -> None:
    n = len(view.seats)
    cols = 1 if n <= 4 else 2  # up to 8 players: two columns of four
    rows = math.ceil(n / cols)
    gap = 8
    pw = (LEFT_W - gap * (cols - 1)) / cols
    ph = min(200.0, (BOTTOM - TOP - gap * (rows - 1)) / rows)
    w = min(80.0, (ph - 40) / 1.4)
    for i, seat in enumerate(view.seats):
        col, row = divmod(i, rows)
        x = LEFT_X + col * (pw + gap)
        y = TOP + row * (ph + gap)
        c.rect(x, y, pw, ph, PANEL_ACT if seat.to_act else PANEL,
               GOLD if seat.to_act else "", 8, 3)  # fmt: skip
        tags = []
        if seat.dealer:
            tags.append("dealer")
        if seat.board > 0 or (seat.board == 0 and len(view.boards) > 1):
            tags.append(f"table {seat.board}")
        name = " · ".join([seat.name, *tags])
        c.text(x + 12, y + 22, name, 17, GOLD if seat.to_act else WHITE, bold=True)
        if seat.to_act:
            c.text(x + pw - 12, y + 22, "TO ACT", 15, GOLD, anchor="end", bold=True)
        status_y = y + 21 if cols == 1 else y + ph - 10
        status_x = x + 12 + 11 * len(name) + 16 if cols == 1 else x + 12
        c.text(status_x, status_y, seat.status, 14, MUTED)
        card_row(c, x + 12, y + 32, pw - 24, w if cols == 1 else min(w, (ph - 58) / 1.4),
                 seat.groups, w * 0.35)  # fmt: skip


def _boards(c: Canvas, view: TableView) -> None:
    n = len(view.boards)
    space = 170.0 if not view.melds else 200.0
    bh = space if n == 1 else (BOTTOM - TOP - 8) / n
    for i, b in enumerate(view.boards):
        y = TOP + i * (bh + 8)
        c.rect(RIGHT_X, y, RIGHT_W, bh, FELT_DARK, "", 8)
        title = b.title or "stock and discard pile"
        c.text(RIGHT_X + 10, y + 20, title, 15, WHITE, bold=True)
        if not b.visible:
            c.text(RIGHT_X + 10, y + 48, b.note, 14, MUTED)
            continue
        w = min(56.0, (bh - 62) / 1.4)
        cy = y + 30
        draw_card(c, RIGHT_X + 10, cy, w, Card(HIDDEN))
        c.text(RIGHT_X + 10 + w / 2, cy + w * 1.4 + 16, f"stock {b.stock}", 13, MUTED,
               anchor="middle")  # fmt: skip
        px = RIGHT_X + 30 + w
        avail = RIGHT_X + RIGHT_W - 10 - px
        pile = b.pile
        label = f"discard pile, {len(pile)} (bottom to top)" if pile else "discard pile empty"
        c.text(px, y + bh - 10, label, 13, MUTED)
        if b.note:
            c.text(RIGHT_X + RIGHT_W - 10, y + 20, b.note, 13, GOLD, anchor="end")
        # rows of the pile, bottom first, each card's corner showing; the top card outlined
        pw, per_row, stride = pile_grid(len(pile), avail, bh - 56, w)
        for k, card in enumerate(pile):
            r, j = divmod(k, per_row)
            draw_card(c, px + j * stride, cy + r * (pw * 1.4 + 5), pw, card, k == len(pile) - 1)


def _melds(c: Canvas, view: TableView) -> None:
    top = TOP + 208
    avail_h = BOTTOM - top
    c.rect(RIGHT_X, top, RIGHT_W, avail_h, FELT_DARK, "", 8)
    c.text(RIGHT_X + 10, top + 20, f"melds on the table ({len(view.melds)})", 15, WHITE, bold=True)
    for w in (40.0, 34.0, 28.0, 23.0, 19.0, 16.0):
        placed = _flow(view, w, RIGHT_W - 20, avail_h - 32)
        if placed is not None:
            break
    assert placed is not None
    for (x, y, w, stride), m in zip(placed, view.melds, strict=True):
        c.text(RIGHT_X + 10 + x, top + 32 + y + 10, m.owner, 11, MUTED)
        for k, card in enumerate(m.cards):
            draw_card(c, RIGHT_X + 10 + x + k * stride, top + 32 + y + 14, w, card)


def _flow(view: TableView, w: float, avail_w: float, avail_h: float):
    """Positions of the melds in rows (None if they do not fit at card width ``w``)."""
    stride = w * 0.55
    row_h = w * 1.4 + 20
    x = y = 0.0
    out = []
    for m in view.melds:
        mw = w + stride * (len(m.cards) - 1)
        s = stride
        if mw > avail_w:
            s = (avail_w - w) / max(1, len(m.cards) - 1)
            mw = avail_w
        if x > 0 and x + mw > avail_w:
            x, y = 0.0, y + row_h
        if y + row_h > avail_h and w > 16:
            return None
        out.append((x, y, w, s))
        x += mw + w * 0.4
    return out


# --- drawing ------------------------------------------------------------------------------------


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_svg(canvas: Canvas, width: int = WIDTH, height: int = HEIGHT) -> str:
    """The canvas as a standalone SVG document."""
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">'
    ]
    # each suit once, used by reference: a table has a hundred suit symbols
    out.append("<defs>")
    for suit in range(4):
        parts = []
        for part in suit_parts(suit):
            if part[0] == "poly":
                pts = " ".join(f"{x:.3f},{y:.3f}" for x, y in part[1])
                parts.append(f'<polygon points="{pts}"/>')
            else:
                parts.append(f'<circle cx="{part[1]}" cy="{part[2]}" r="{part[3]}"/>')
        out.append(f'<g id="suit{suit}" fill="{suit_colour(suit)}">{"".join(parts)}</g>')
    out.append("</defs>")
    for sh in canvas.shapes:
        paint = f'fill="{sh.fill or "none"}"'
        if sh.stroke:
            paint += f' stroke="{sh.stroke}" stroke-width="{sh.width:.3g}"'
        g = sh.geom
        if sh.kind == "rect":
            x, y, w, h, r = g
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{r:.1f}" '
                f"{paint}/>"
            )
        elif sh.kind == "poly":
            pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in g)
            out.append(f'<polygon points="{pts}" {paint}/>')
        elif sh.kind == "circle":
            out.append(f'<circle cx="{g[0]:.1f}" cy="{g[1]:.1f}" r="{g[2]:.1f}" {paint}/>')
        elif sh.kind == "suit":
            suit, cx, cy, size = g
            out.append(
                f'<use href="#suit{suit}" transform="translate({cx:.1f} {cy:.1f}) '
                f'scale({size:.2f})"/>'
            )
        else:
            x, y, size, anchor, bold = g
            weight = ' font-weight="bold"' if bold else ""
            out.append(
                f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size:.1f}" text-anchor="{anchor}"'
                f"{weight} {paint}>{_esc(sh.text)}</text>"
            )
    out.append("</svg>")
    return "\n".join(out)


@lru_cache(maxsize=64)
def _font(size: int, bold: bool) -> Any:
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


_ANCHORS = {"start": "ls", "middle": "ms", "end": "rs"}


def to_array(
    canvas: Canvas, width: int = WIDTH, height: int = HEIGHT, supersample: int = 2
) -> np.ndarray:
    """The canvas as an (height, width, 3) ``uint8`` picture (Pillow), drawn ``supersample``
    times larger and scaled down: Pillow's shapes have no anti-aliasing of their own.
    """
    try:
        from PIL import Image, ImageDraw
    except ImportError as e:  # pragma: no cover - Pillow is a dependency
        raise ImportError("render_mode='rgb_array' needs Pillow: pip install pillow") from e
    k = supersample
    if k != 1:
        canvas = _scaled(canvas, k, k)
    img = Image.new("RGB", (width * k, height * k), FELT)
    d = ImageDraw.Draw(img)
    for sh in canvas.shapes:
        g = sh.geom
        fill = sh.fill or None
        if sh.kind == "rect":
            x, y, w, h, r = g
            box = (x, y, x + w, y + h)
            outline = sh.stroke or None
            lw = max(1, round(sh.width)) if outline else 0
            if r > 0.5:
                d.rounded_rectangle(box, radius=r, fill=fill, outline=outline, width=lw)
            else:
                d.rectangle(box, fill=fill, outline=outline, width=lw)
        elif sh.kind == "poly":
            d.polygon(list(g), fill=fill)
        elif sh.kind == "circle":
            cx, cy, r = g
            d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
        elif sh.kind == "suit":
            suit, cx, cy, size = g
            for part in suit_parts(suit):
                if part[0] == "poly":
                    d.polygon([(cx + x * size, cy + y * size) for x, y in part[1]], fill=fill)
                else:
                    x, y, r = cx + part[1] * size, cy + part[2] * size, part[3] * size
                    d.ellipse((x - r, y - r, x + r, y + r), fill=fill)
        else:
            x, y, size, anchor, bold = g
            font = _font(max(6, round(size)), bool(bold))
            d.text((x, y), sh.text, fill=fill, font=font, anchor=_ANCHORS[anchor])
            if bold:  # the bundled font has no bold face: overstrike by a pixel
                d.text((x + 0.8 * k, y), sh.text, fill=fill, font=font, anchor=_ANCHORS[anchor])
    if k != 1:
        img = img.resize((width, height), Image.Resampling.BOX)
    return np.asarray(img, dtype=np.uint8).copy()


def picture(view: TableView, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """A table view as an (height, width, 3) ``uint8`` picture."""
    return to_array(layout(view, width, height), width, height)


def svg(view: TableView, width: int = WIDTH, height: int = HEIGHT) -> str:
    """A table view as an SVG document."""
    return to_svg(layout(view, width, height), width, height)


__all__ = ["Canvas", "card_text", "draw_card", "layout", "picture", "svg", "to_array", "to_svg"]
