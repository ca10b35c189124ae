"""Plotting helpers shared by every chapter.

Every function is pure: ``f(data, ax=None, **style) -> Axes``. It draws on
``ax`` (or on a new figure's axes) and returns the axes, so chapters and
widgets compose them freely. One colour scheme, :data:`COLORS`, is used for
the same thing everywhere in the book: the Okabe-Ito palette, which readers
with any of the common colour-vision deficiencies can tell apart, and each
model also has its own line style and marker (:data:`MODEL_STYLES`,
:func:`model_style`), so that no plot tells models apart by colour alone.

:func:`use_style` sets the book's matplotlib style (:data:`STYLE`): text
sizes that stay readable at the width the website shows a figure, and, in a
notebook, figures saved at twice the resolution and shown at their size in
inches times 100 CSS pixels.

The functions never call ``tight_layout`` or ``show`` and draw few artists
(all discs are one collection), so a widget can clear an axes and redraw
many times a second.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence
from typing import Any

import matplotlib
import matplotlib.scale
import matplotlib.ticker
import numpy as np
import torch
from cycler import cycler
from matplotlib import patheffects
from matplotlib.axes import Axes
from matplotlib.collections import PatchCollection
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, Patch

from . import _checks
from .analysis import eigenvalues as _eigenvalues
from .analysis import gershgorin_discs

__all__ = [
    "COLORS",
    "LogTickFormatter",
    "MODEL_STYLES",
    "OKABE_ITO",
    "SCRIPT_PX",
    "SMALLEST_SCRIPT_KEY",
    "SMALLEST_TEXT_KEY",
    "STYLE",
    "figure_png",
    "model_style",
    "plot_discs",
    "plot_spectrum",
    "smallest_script_pt",
    "smallest_script_px",
    "smallest_text_pt",
    "use_style",
]

# the Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008)
OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}

COLORS: dict[str, str] = {
    # models
    "rhn": OKABE_ITO["blue"],
    "lstm": OKABE_ITO["orange"],
    "gru": OKABE_ITO["bluish_green"],
    "rnn": OKABE_ITO["vermillion"],
    # spectra
    "disc": OKABE_ITO["blue"],
    "eigenvalue": OKABE_ITO["vermillion"],
    "unit_circle": "#555555",
    "baseline": "#7f7f7f",  # constant-prediction baselines, reference lines
}
"""Colour for each model and each element of a spectrum plot (Okabe-Ito)."""

MODEL_STYLES: dict[str, dict[str, str]] = {
    "rhn": {"color": COLORS["rhn"], "linestyle": "-", "marker": "o"},
    "lstm": {"color": COLORS["lstm"], "linestyle": "--", "marker": "s"},
    "gru": {"color": COLORS["gru"], "linestyle": "-.", "marker": "^"},
    "rnn": {"color": COLORS["rnn"], "linestyle": ":", "marker": "D"},
}
"""The colour, line style and marker of each model (two cues besides colour)."""

# the colours of lines that name no model: the Okabe-Ito order. The cycle
# holds colours only: a line style in it would also dash the lines whose
# colour a chapter sets, drawing a "solid" curve dotted
_CYCLE = cycler(
    color=[OKABE_ITO[k] for k in ("blue", "orange", "bluish_green", "vermillion")]
    + [OKABE_ITO[k] for k in ("reddish_purple", "sky_blue", "black")]
)

STYLE: dict[str, Any] = {
    # 1 inch of figure is 100 CSS px on the website (use_style saves at twice
    # that and says so): 10 pt text is 13.9 px; the column is about 750 px
    "figure.dpi": 100,
    "figure.figsize": (6.4, 4.0),
    "figure.facecolor": "white",  # a light card in the site's dark mode too
    "savefig.facecolor": "white",
    "font.size": 10.0,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10.0,
    # tick labels and legends at matplotlib's own 10 pt (the book had 9):
    # mathematics draws superscripts and subscripts at 0.7 of their text, and
    # the 10^{-5} of a log axis or the T of a legend's $b_T$ must be 9 CSS px
    # (SCRIPT_PX) at 100 px per inch, which is 6.5 pt; 0.7 x 10 pt is 7 pt
    "xtick.labelsize": 10.0,
    "ytick.labelsize": 10.0,
    "legend.fontsize": 10.0,
    "legend.title_fontsize": 10.0,
    "axes.unicode_minus": True,  # tick labels: -2 with a minus sign, U+2212
    "figure.titlesize": 11.0,
    "axes.prop_cycle": _CYCLE,
    "lines.linewidth": 1.6,
    "lines.markersize": 5.0,
}
"""The book's matplotlib rcParams (see :func:`use_style`)."""

SMALLEST_TEXT_KEY = "rhn:smallest-text-pt"
"""PNG text key under which :func:`use_style`'s figures record their smallest
font size in points (the browser tests turn it into CSS pixels)."""

SMALLEST_SCRIPT_KEY = "rhn:smallest-script-pt"
"""PNG text key under which :func:`use_style`'s figures record the size in
points of their smallest superscript or subscript (:func:`smallest_script_pt`;
``inf`` for a figure without one)."""

SCRIPT_PX = 9.0
"""The smallest a superscript or subscript of a figure may be, in CSS px, on a
laptop and on a phone alike (mathematics draws them at 0.7 of their text)."""


def model_style(name: str, *, marker: bool = True) -> dict[str, Any]:
    """Keyword arguments for ``ax.plot`` that draw model ``name`` in its style.

    Args:
        name: ``"rhn"``, ``"lstm"``, ``"gru"`` or ``"rnn"`` (any case; a label
            such as ``"RHN D=3"`` is matched by its first word).
        marker: include the model's marker (default ``True``); pass
            ``markevery`` to ``ax.plot`` on long lines.

    Returns:
        ``{"color": ..., "linestyle": ..., "marker": ...}``.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    key = name.split()[0].lower() if name.split() else ""
    if key not in MODEL_STYLES:
        raise ValueError(
            f"name must start with one of {sorted(MODEL_STYLES)}, got {name!r}"
        )
    style = dict(MODEL_STYLES[key])
    if not marker:
        del style["marker"]
    return style


def smallest_text_pt(fig: Any) -> float:
    """The smallest font size, in points, of the visible text of ``fig``.

    The tick labels counted are those the axes draw at their current limits
    (a figure not drawn yet has their texts still empty).
    """
    sizes = [t.get_fontsize() for t in _visible_texts(fig)]
    return float(min(sizes)) if sizes else float("inf")


def _math_glyph_sizes(text: Any) -> list[float]:
    """The font size in points of each glyph of ``text``'s mathematics
    (``$...$``, as matplotlib's mathtext lays it out); ``[]`` for plain text."""
    from matplotlib import cbook

    string = text.get_text()
    if text.get_usetex() or not text.get_parse_math():
        return []
    sizes: list[float] = []
    for line in string.split("\n"):  # matplotlib lays out each line alone
        if not cbook.is_math_text(line):
            continue
        parsed = _mathtext_parser().parse(line, 72, text.get_fontproperties())
        sizes += [glyph[1] for glyph in parsed.glyphs]
    return sizes


_MATHTEXT: Any = None


def _mathtext_parser() -> Any:
    global _MATHTEXT
    if _MATHTEXT is None:
        from matplotlib.mathtext import MathTextParser

        _MATHTEXT = MathTextParser("path")  # caches what it parsed
    return _MATHTEXT


def smallest_script_pt(fig: Any) -> float:
    """The font size, in points, of the smallest superscript or subscript of
    ``fig``'s visible text (``inf`` when it has none).

    :func:`smallest_text_pt` reads each text's font size; the mathematics in a
    text (``$b_T$``, the ``$10^{-5}$`` of a log axis's tick labels) draws its
    scripts smaller, at 0.7 of it (0.49 for a script's script). This reads the
    size of every glyph that matplotlib's mathtext lays out, and returns the
    smallest one that is smaller than its text. The tick labels counted are
    those the axes draw at their current limits.
    """
    smallest = float("inf")
    for text in _visible_texts(fig):
        size = text.get_fontsize()
        for glyph in _math_glyph_sizes(text):
            if glyph < size - 1e-6:
                smallest = min(smallest, glyph)
    return smallest


def _png_width(data: bytes) -> int:
    # the IHDR chunk follows the 8-byte signature: length, type, width, height
    return struct.unpack(">I", data[16:20])[0]


def png_facts(data: bytes) -> tuple[int, float, float | None]:
    """Pixel width, dots per inch and recorded smallest text size of a PNG.

    The text size (points) is the one :func:`figure_png` records under
    :data:`SMALLEST_TEXT_KEY`, or ``None`` for other PNGs. Text of ``pt`` points
    in a PNG shown ``shown`` CSS pixels wide is ``pt / 72 * dpi * shown / width``
    CSS pixels tall.
    """
    width, dpi, texts = _png_chunks(data)
    smallest = texts.get(SMALLEST_TEXT_KEY)
    return width, dpi, None if smallest is None else float(smallest)


def _png_chunks(data: bytes) -> tuple[int, float, dict[str, str]]:
    """A PNG's pixel width, dots per inch and text chunks."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("data must be a PNG file's bytes (no PNG signature)")
    width = _png_width(data)
    dpi, texts, pos = 72.0, {}, 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"pHYs" and body[8] == 1:  # pixels per metre
            dpi = struct.unpack(">I", body[:4])[0] * 0.0254
        elif kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            texts[key.decode("latin-1")] = value.decode("latin-1")
        pos += 12 + length
    return width, dpi, texts


def smallest_text_px(data: bytes, shown: float) -> float | None:
    """The smallest text of a :func:`figure_png` PNG shown ``shown`` CSS px wide.

    In CSS pixels: ``pt / 72 * dpi * shown / width`` from :func:`png_facts`;
    ``None`` when the PNG does not record its smallest font size.
    """
    width, dpi, pt = png_facts(data)
    return None if pt is None else pt / 72 * dpi * shown / width


def smallest_script_px(data: bytes, shown: float) -> float | None:
    """The smallest superscript or subscript of a :func:`figure_png` PNG shown
    ``shown`` CSS px wide, in CSS pixels.

    ``inf`` for a figure without one, ``None`` when the PNG does not record it
    (:data:`SMALLEST_SCRIPT_KEY`).
    """
    width, dpi, texts = _png_chunks(data)
    if SMALLEST_SCRIPT_KEY not in texts:
        return None
    return float(texts[SMALLEST_SCRIPT_KEY]) / 72 * dpi * shown / width


def text_record(fig: Any) -> dict[str, str]:
    """What :func:`figure_png` writes in a PNG's text chunks: the smallest
    font size and the smallest script of ``fig``, in points."""
    return {
        SMALLEST_TEXT_KEY: f"{smallest_text_pt(fig):.2f}",
        SMALLEST_SCRIPT_KEY: f"{smallest_script_pt(fig):.2f}",
    }


def figure_png(fig: Any, *, scale: int = 2) -> tuple[bytes, dict[str, int]]:
    """``fig`` as PNG at ``scale`` times its dpi, and the width to show it at.

    The PNG records the figure's smallest font size (:data:`SMALLEST_TEXT_KEY`)
    and its smallest superscript or subscript (:data:`SMALLEST_SCRIPT_KEY`).
    Returns ``(png, {"width": css_pixels})``, the form IPython's display
    formatters return, so that the page shows it at ``fig.dpi`` pixels per inch
    however sharp it is.
    """
    buf = io.BytesIO()
    fig.canvas.print_figure(
        buf,
        format="png",
        dpi=scale * fig.dpi,
        bbox_inches="tight",
        metadata=text_record(fig),
    )
    data = buf.getvalue()
    return data, {"width": round(_png_width(data) / scale)}


PHONE_COLUMN_PX = 342
"""The chapter column's width in CSS px on a 390 px wide phone."""

NARROW_KEY = "rhn:narrow"
"""Key of :func:`figure_png_for_phone`'s narrower rendering in a PNG output's
metadata (``{"png": base64, "width": css_pixels}``); the site serves it to
phones (``_ext/narrow_figures.py``)."""

PHONE_TEXT_PX = 10.5
"""The smallest text, in CSS px, of a figure as a phone shows it: a figure
whose text would be smaller in the phone's column gets a narrower drawing."""

_PHONE_AIM_PX = 11.0  # aim a little over it: the tight box can widen a PNG
_PHONE_SCRIPT_AIM_PX = 9.4  # and over SCRIPT_PX for superscripts and subscripts


def _phone_px(png: bytes, meta: dict[str, Any]) -> tuple[float, float]:
    """The smallest text and script of a :func:`figure_png` PNG in a phone's
    column, in CSS px (``inf`` for what the figure does not have)."""
    shown = min(meta["width"], PHONE_COLUMN_PX)
    text = smallest_text_px(png, shown)
    script = smallest_script_px(png, shown)
    return (
        float("inf") if text is None else text,
        float("inf") if script is None else script,
    )


def _reads_on_phone(px: tuple[float, float]) -> bool:
    return px[0] >= PHONE_TEXT_PX and px[1] >= SCRIPT_PX


def narrow_png(fig: Any, *, scale: int = 3) -> tuple[bytes, dict[str, int]] | None:
    """``fig`` redrawn narrower, so its smallest text reads on a phone.

    A figure shown in a phone's column (:data:`PHONE_COLUMN_PX`) is scaled
    down with its text. When its smallest text would be under
    :data:`PHONE_TEXT_PX` (10.5 CSS px) there, or its smallest superscript or
    subscript under :data:`SCRIPT_PX` (9 CSS px),
    the same figure is drawn again at a width where neither is (text sizes
    unchanged, the axes narrower, the height shrunk by only the square root of
    the width's factor), at ``scale`` times its dpi (sharp on a 3x screen).
    Returns :func:`figure_png`'s ``(png, {"width": css_pixels})`` for that
    drawing, or ``None`` when the figure reads on a phone as it is. The figure
    is left at its own size and layout.
    """
    return _narrow(fig, scale)[0]


def narrow_reason(fig: Any) -> str:
    """Why :func:`narrow_png` gives ``fig`` no phone drawing, in a few words.

    ``"reads as it is"`` for a figure that needs none, ``""`` for one that
    gets one; otherwise the narrowed drawing's smallest text in CSS px, the
    texts that collide in it, or that the layout engine gave up. A
    diagnostic for a figure that scrolls sideways on a phone.
    """
    return _narrow(fig, 3)[1]


def _narrow(fig: Any, scale: int) -> tuple[tuple[bytes, dict[str, int]] | None, str]:
    """:func:`narrow_png`'s drawing, or ``None``, and :func:`narrow_reason`'s text."""
    pt = smallest_text_pt(fig)
    full_png, full_meta = figure_png(fig, scale=1)
    if not np.isfinite(pt) or _reads_on_phone(_phone_px(full_png, full_meta)):
        return None, "reads as it is"
    script_pt = smallest_script_pt(fig)
    width_in, height_in = fig.get_size_inches()
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    # a figure laid out once by tight_layout() holds a place-holder engine,
    # which does nothing at another size
    engine = fig.get_layout_engine()
    fixed = engine is None or isinstance(engine, PlaceHolderLayoutEngine)
    saved = {k: getattr(fig.subplotpars, k) for k in _SUBPLOT_PARAMS}
    # CSS px wide: the text at _PHONE_AIM_PX, the scripts at _PHONE_SCRIPT_AIM_PX
    aim = min(pt / _PHONE_AIM_PX, script_pt / _PHONE_SCRIPT_AIM_PX)
    target = aim / 72 * fig.dpi * PHONE_COLUMN_PX
    factor = target / full_meta["width"]
    row, grid = _panels(fig)
    specs, hidden = [], []
    if row:  # a row or grid of panels: one above the other on a phone
        specs = [ax.get_subplotspec() for ax in row]
        # a panel with its axis off (a legend's) needs less height
        ratios = [1.0 if ax.axison else 0.6 for ax in row]
        stacked = fig.add_gridspec(len(row), 1, height_ratios=ratios)
        for i, ax in enumerate(row):
            ax.set_subplotspec(stacked[i, 0])
        # each panel is its column's first now: shared y tick labels shown
        hidden = [ax for ax in row if not ax.yaxis.get_tick_params()["labelleft"]]
        for ax in hidden:
            ax.tick_params(axis="y", labelleft=True)
    # a legend of several columns is wider than a phone: one column
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    columns = [(lg, lg._ncols) for lg in legends if getattr(lg, "_ncols", 1) > 1]
    for legend, _ in columns:
        _legend_columns(legend, 1)
    # a title or axis label wider than the phone's drawing does not shrink
    # with it: two lines
    import warnings

    with warnings.catch_warnings():
        # the panels, moved above one another, are laid out at the narrow
        # size below; at the figure's own size they may not fit, and the
        # warning would show on the page for a layout never drawn
        warnings.filterwarnings("ignore", message=_COLLAPSED)
        wrapped = _wrap_long_texts(fig, 0.9 * target)
    turned: list[tuple[Any, float, list[str]]] = []
    moved: list[tuple[Any, Any, Any, float]] = []

    try:
        # a layout engine that cannot fit the axes at the narrower size warns
        # and leaves them where they were: no phone drawing then, and no
        # warning on the page for a drawing that is thrown away
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            px, png, meta = _narrow_drawing(
                fig,
                row,
                grid,
                fixed,
                turned,
                moved,
                factor,
                target,
                (width_in, height_in),
                scale,
            )
            clash = _colliding_texts(fig)
        collapsed = False
        for w in caught:
            if str(w.message).startswith(_COLLAPSED):
                collapsed = True
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        # a drawing that is still too wide (text that does not shrink with
        # the figure), whose labels collide or that no layout engine could lay
        # out is no better than the figure
        if collapsed:
            return None, "the layout engine could not lay it out"
        if px[0] < PHONE_TEXT_PX:
            return None, f"text still {px[0]:.1f} px after narrowing"
        if px[1] < SCRIPT_PX:
            return None, f"scripts still {px[1]:.1f} px after narrowing"
        if clash:
            pairs = "; ".join(f"{a!r} / {b!r}" for a, b in clash[:4])
            return None, f"texts collide: {pairs}"
        return (png, meta), ""
    finally:
        fig.set_size_inches(width_in, height_in)
        for ax, spec in zip(row, specs, strict=True):
            ax.set_subplotspec(spec)
            if ax in hidden:
                ax.tick_params(axis="y", labelleft=False)
        for legend, ncols in columns:
            _legend_columns(legend, ncols)
        for text, was in wrapped:
            text.set_text(was)
        for legend, loc, anchor, pad in moved:
            legend._loc, legend._bbox_to_anchor, legend.borderaxespad = loc, anchor, pad
        for ax, rotation, aligns in turned:
            ax.tick_params(axis="x", labelrotation=rotation)
            for label, align in zip(ax.get_xticklabels(), aligns, strict=False):
                label.set_horizontalalignment(align)
        if fixed:
            fig.subplots_adjust(**saved)


def _legend_columns(legend: Any, ncols: int) -> None:
    """Lay ``legend`` out again in ``ncols`` columns: matplotlib builds a
    legend's box once, so a new column count alone changes nothing."""
    legend._ncols = ncols
    labels = [t.get_text() for t in legend.texts]
    title = legend.get_title()
    text, prop = title.get_text(), title.get_fontproperties()
    legend._init_legend_box(list(legend.legend_handles), labels)
    # the new box has an empty title row: the legend's own title (or none)
    legend.set_title(text, prop=prop)
    # and does not know where the legend goes until told again
    default = legend._loc_used_default
    legend._loc = legend._loc
    legend._loc_used_default = default


def _split_in_two(text: str) -> str | None:
    """``text`` with its longest line on two, broken at the space nearest
    that line's middle that is outside ``$...$`` mathematics; ``None`` when
    the line has no such space."""
    lines = text.split("\n")
    k = max(range(len(lines)), key=lambda n: len(lines[n]))
    line = lines[k]
    spaces, in_math = [], False
    for i, c in enumerate(line):
        if c == "$" and (i == 0 or line[i - 1] != "\\"):
            in_math = not in_math
        elif c == " " and not in_math:
            spaces.append(i)
    if not spaces:
        return None
    i = min(spaces, key=lambda n: abs(n - len(line) / 2))
    lines[k : k + 1] = [line[:i], line[i + 1 :]]
    return "\n".join(lines)


def _wrap_long_texts(fig: Any, width_px: float) -> list[tuple[Any, str]]:
    """Break each title, axis label and legend entry of ``fig`` wider than
    ``width_px`` (at ``fig.dpi``; an entry's handle and the legend's padding
    taken off) onto more lines, its longest line in two at a time, until it
    fits (three breaks at most); returns ``(text, its old string)``."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for t in (fig._suptitle, fig._supxlabel) if t is not None]
    room = dict.fromkeys(map(id, texts), width_px)
    for ax in fig.axes:
        for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label):
            texts.append(text)
            room[id(text)] = width_px
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if legend is None:
            continue
        # a legend of one column at the phone's width: its entries' room
        pads = legend.handlelength + legend.handletextpad + 2 * legend.borderpad
        pads += 2 * legend.borderaxespad
        font_px = legend.prop.get_size_in_points() * fig.dpi / 72
        for text in legend.get_texts():
            texts.append(text)
            room[id(text)] = width_px - pads * font_px
    wrapped = []
    for text in texts:
        was = text.get_text()
        if not text.get_visible() or not was.strip():
            continue
        for _ in range(3):  # a line broken again while it is too wide
            if text.get_window_extent(renderer).width <= room[id(text)]:
                break
            shorter = _split_in_two(text.get_text())
            if shorter is None:
                break
            text.set_text(shorter)
        if text.get_text() != was:
            wrapped.append((text, was))
    return wrapped


# the start of matplotlib's warning when constrained layout gives up
_COLLAPSED = "constrained_layout not applied"


def _narrow_drawing(
    fig: Any,
    row: list[Any],
    grid: tuple[int, int],
    fixed: bool,
    turned: list[tuple[Any, float, list[str]]],
    moved: list[tuple[Any, Any, Any, float]],
    factor: float,
    target: float,
    size: tuple[float, float],
    scale: int,
) -> tuple[tuple[float, float], bytes, dict[str, int]]:
    """:func:`narrow_png`'s drawing: ((smallest text, smallest script) in px,
    PNG, its width)."""
    width_in, height_in = size
    nrows, ncols = grid
    panels = len(row) or 1
    for _ in range(4):  # the tight box's width is known after drawing
        # a panel's width grows by factor * ncols when the grid stacks;
        # its height grows less, and shrinks less than its width
        grow = factor * ncols
        panel_height = height_in / nrows * (min(grow, 1.25) if row else grow**0.5)
        if row and all(ax.get_aspect() != "auto" for ax in row):
            # axes of fixed aspect (the complex plane): as tall as their
            # box at this width, plus room for title and labels
            box = max(ax.get_aspect() * ax.get_data_ratio() for ax in row)
            panel_height = min(panel_height, 0.8 * width_in * factor * box + 1.0)
        # a legend moved under its axes adds its own height
        extra = sum(lg.get_window_extent().height for lg, *_ in moved) / fig.dpi
        fig.set_size_inches(width_in * factor, panel_height * panels + extra)
        if fixed:
            _relayout(fig)
        for _ in range(2):  # slanted first, upright if still crowded
            if _turn_crowded_ticks(fig, turned) and fixed:
                _relayout(fig)
        if _legends_below(fig, moved) and fixed:
            _relayout(fig)
        # labels turned upright or a legend moved under the axes leave them
        # flat: the figure grows until each plot is half its panel's height
        fig.canvas.draw()
        low = [ax.bbox.height / fig.dpi for ax in fig.axes if ax.axison]
        short = 0.5 * panel_height - min(low, default=panel_height)
        if short > 0.05:
            fig.set_size_inches(
                width_in * factor, fig.get_size_inches()[1] + short * panels
            )
            if fixed:
                _relayout(fig)
        png, meta = figure_png(fig, scale=scale)
        px = _phone_px(png, meta)
        if _reads_on_phone(px):
            break
        factor *= target / meta["width"]
    return px, png, meta


def _legends_below(fig: Any, moved: list[tuple[Any, Any, Any, float]]) -> bool:
    """Move each axes legend that covers over a third of its axes' width or
    height (as last drawn) under the axes, below its x tick labels and
    label; True if any moved."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    done = {id(legend) for legend, _, _, _ in moved}
    changed = False
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not ax.axison or id(legend) in done:
            continue
        box, frame = legend.get_window_extent(renderer), ax.bbox
        if box.width < frame.width / 3 and box.height < frame.height / 3:
            continue
        moved.append(
            (legend, legend._loc, legend._bbox_to_anchor, legend.borderaxespad)
        )
        below = [ax.xaxis.label, *_drawn_tick_labels(ax.xaxis)]
        bottom = min(
            (t.get_window_extent(renderer).y0 for t in below if t.get_text().strip()),
            default=frame.y0,
        )
        font_px = legend.prop.get_size_in_points() * fig.dpi / 72
        legend._loc = 9  # upper center
        legend.set_bbox_to_anchor((0.5, 0.0), transform=ax.transAxes)
        legend.borderaxespad = (frame.y0 - bottom) / font_px + 0.5
        changed = True
    return changed


def _drawn_tick_labels(axis: Any) -> list[Any]:
    """The tick labels ``axis`` draws (not those of ticks beyond its limits)."""
    ticks = axis._update_ticks()  # what Axis.draw draws
    return [
        label
        for tick in ticks
        for label in (tick.label1, tick.label2)
        if label.get_visible() and label.get_text().strip()
    ]


def _visible_texts(fig: Any) -> list[Any]:
    from matplotlib.text import Text

    ticks = {
        id(label)
        for ax in fig.axes
        for axis in (ax.xaxis, ax.yaxis)
        for label in axis.get_ticklabels(which="both")
    }
    texts = [
        t
        for t in fig.findobj(Text)
        if id(t) not in ticks
        and t.get_visible()
        and t.get_text().strip()
        and (t.axes is None or t.axes.get_visible())
    ]
    for ax in fig.axes:
        if ax.get_visible():
            texts += _drawn_tick_labels(ax.xaxis) + _drawn_tick_labels(ax.yaxis)
    return texts


def _overlap(a: Any, b: Any) -> bool:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width > 1 and height > 1


def _turn_crowded_ticks(fig: Any, turned: list[tuple[Any, float, list[str]]]) -> bool:
    """Slant the x tick labels of axes where neighbours collide, and turn
    them upright where slanted ones still do; True if any changed."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    done = {id(ax) for ax, _, _ in turned}
    changed = False
    for ax in fig.axes:
        labels = _drawn_tick_labels(ax.xaxis)
        boxes = sorted(
            (t.get_window_extent(renderer) for t in labels), key=lambda b: b.x0
        )
        if not any(map(_overlap, boxes, boxes[1:])):
            continue
        if id(ax) in done:  # slanted and still crowded (labels of two lines)
            if labels[0].get_rotation() < 90:
                ax.tick_params(axis="x", labelrotation=90)
                for label in ax.get_xticklabels():
                    label.set_horizontalalignment("center")
                changed = True
            continue
        aligns = [t.get_horizontalalignment() for t in ax.get_xticklabels()]
        rotation = labels[0].get_rotation()
        turned.append((ax, rotation, aligns))
        ax.tick_params(axis="x", labelrotation=40)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
        changed = True
    return changed


def _colliding_texts(fig: Any) -> list[tuple[str, str]]:
    """The pairs of visible texts of ``fig`` that overlap (as last drawn)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = _visible_texts(fig)
    boxes = [t.get_window_extent(renderer) for t in texts]
    return [
        (texts[i].get_text(), texts[k].get_text())
        for i, a in enumerate(boxes)
        for k in range(i + 1, len(boxes))
        if _overlap(a, boxes[k])
    ]


def _panels(fig: Any) -> tuple[list[Any], tuple[int, int]]:
    """The axes of ``fig`` in reading order, and their grid's (rows, columns),
    when they fill one cell each of one grid of two or more columns: a row of
    panels, or a grid (a panel with its axis turned off, holding a legend,
    counts);
    ``([], (1, 1))`` for any other figure."""
    axes = [ax for ax in fig.axes if ax.get_visible()]
    none: tuple[list[Any], tuple[int, int]] = ([], (1, 1))
    if len(axes) < 2 or len(axes) != len(fig.axes):
        return none
    specs = [ax.get_subplotspec() for ax in axes]
    if any(spec is None for spec in specs):
        return none
    grid = specs[0].get_gridspec()
    nrows, ncols = grid.get_geometry()
    cells = sorted(spec.num1 for spec in specs if spec.num1 == spec.num2)
    same = all(spec.get_gridspec() is grid for spec in specs)
    if not same or ncols < 2:
        return none
    if nrows > 1:  # a grid: panels may span cells (a mosaic), none overlap
        cells = [c for spec in specs for c in _cells(spec, ncols)]
        if len(set(cells)) != len(cells):
            return none
    elif len(cells) != len(axes) or cells != list(range(ncols)):
        return none  # a row: one panel in each cell, none spanning two

    # reading order: by the last row a panel covers, then by its column (a
    # panel spanning the rows of a block comes after the block)
    def place(ax: Any) -> tuple[int, int]:
        spec = ax.get_subplotspec()
        return spec.num2 // ncols, spec.num1 % ncols

    return sorted(axes, key=place), (nrows, ncols)


def _cells(spec: Any, ncols: int) -> list[int]:
    """The grid cells ``spec`` covers."""
    r0, c0 = divmod(spec.num1, ncols)
    r1, c1 = divmod(spec.num2, ncols)
    return [r * ncols + c for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)]


_SUBPLOT_PARAMS = ("left", "right", "bottom", "top", "wspace", "hspace")


def _relayout(fig: Any) -> None:
    # a figure without a layout engine keeps its margins as fractions of its
    # size; at a narrower size they would be too small for the tick labels
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for _ in range(2):  # the second pass settles the label sizes
                fig.tight_layout()
        except (ValueError, RuntimeError):  # axes that tight_layout cannot place
            pass


def figure_png_for_phone(fig: Any) -> tuple[bytes, dict[str, Any]]:
    """:func:`figure_png`, with :func:`narrow_png`'s drawing in the metadata.

    The display formatter :func:`use_style` installs: the PNG output carries
    the narrower drawing under :data:`NARROW_KEY` when the figure needs one.
    A figure that brings its own phone drawing (a ``rhn_phone_drawing``
    attribute: a function returning a narrow figure, as
    :func:`rhn.diagrams.draw_rhn_cell` sets) gets that one, at 3x.
    """
    import base64

    png, meta = figure_png(fig)
    own = getattr(fig, "rhn_phone_drawing", None)
    if callable(own):
        import matplotlib.pyplot as plt

        phone = own()
        try:
            narrow = figure_png(phone, scale=3)
        finally:
            plt.close(phone)
    else:
        narrow = narrow_png(fig)
    if narrow is not None:
        data, narrow_meta = narrow
        meta = {
            **meta,
            NARROW_KEY: {"png": base64.b64encode(data).decode(), **narrow_meta},
        }
    return png, meta


class LogTickFormatter(matplotlib.ticker.LogFormatterSciNotation):
    r"""Tick labels of a log axis: plain numbers where they are short.

    An axis whose labelled ticks all lie from 0.001 to 9999 reads ``0.02``,
    ``0.5``, ``300``; any other axis reads matplotlib's powers of ten
    (``$10^{-5}$``, and ``$3\times10^{-2}$`` between the decades). The plain
    numbers have no superscript, and they are lower than ``$3\times10^{-2}$``:
    the labels of an axis that spans about a decade stay apart in a phone's
    drawing. Which ticks are labelled is matplotlib's choice, as before.
    """

    PLAIN = (1e-3, 1e4)

    def set_locs(self, locs: Any = None) -> None:
        super().set_locs(locs)
        self._plain = False
        if self._base != 10 or self.axis is None or locs is None:
            return
        lo, hi = sorted(self.axis.get_view_interval())
        label = super().__call__  # "" for a tick left without a label
        shown = [x for x in locs if lo <= x <= hi and label(x)]
        self._plain = all(self.PLAIN[0] <= x < self.PLAIN[1] for x in shown)

    def __call__(self, x: float, pos: int | None = None) -> str:
        label = super().__call__(x, pos)
        if not label or not getattr(self, "_plain", False):
            return label
        return rf"$\mathdefault{{{x:.4g}}}$"


class _LogScale(matplotlib.scale.LogScale):
    """matplotlib's log scale with :class:`LogTickFormatter`'s tick labels."""

    def set_default_locators_and_formatters(self, axis: Any) -> None:
        super().set_default_locators_and_formatters(axis)
        axis.set_major_formatter(LogTickFormatter(self.base))
        axis.set_minor_formatter(
            LogTickFormatter(self.base, labelOnlyBase=self.subs is not None)
        )


def use_style() -> None:
    """Use the book's figure style: :data:`STYLE`, and sharp PNGs in notebooks.

    Sets matplotlib's rcParams to :data:`STYLE`, gives every log axis made
    from then on :class:`LogTickFormatter`'s tick labels (the scale ``"log"``
    is registered again, with them) and, inside IPython (Jupyter, Colab, the
    book's build), shows every figure through :func:`figure_png`. Chapters
    call it once, in their import cell.
    """
    import warnings

    import matplotlib

    matplotlib.rcParams.update(STYLE)
    with warnings.catch_warnings():
        # matplotlib 3.11 plans to drop the scales' axis argument, which
        # LogScale still takes (and 3.10's scale_factory still passes)
        warnings.filterwarnings("ignore", message=".*'axis' parameter")
        matplotlib.scale.register_scale(_LogScale)
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: rcParams are all there is to set
        return
    shell = get_ipython()
    if shell is None:
        return
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    # load the backend now: the inline backend registers its own PNG
    # formatter when it is first loaded, which would replace ours
    plt.switch_backend(matplotlib.get_backend())
    shell.display_formatter.formatters["image/png"].for_type(
        Figure, figure_png_for_phone
    )


def _as_array(name: str, value: object, complex_ok: bool) -> np.ndarray:
    """A 1-D numpy array from a tensor, an array or a sequence of numbers."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.is_complex():
            value = value.to(torch.complex128)
        else:
            value = value.to(torch.float64)
        arr = value.numpy()
    else:
        try:
            arr = np.asarray(value)
        except Exception as err:  # ragged lists and other oddities
            raise TypeError(
                f"{name} must be a tensor, an array or a sequence of numbers, "
                f"got {type(value).__name__}"
            ) from err
    if arr.dtype.kind not in "iufc" or (arr.dtype.kind == "c" and not complex_ok):
        kind = "real or complex" if complex_ok else "real"
        raise TypeError(f"{name} must hold {kind} numbers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one matrix; loop over a batch), got shape "
            f"{_checks.shape_str(arr.shape)}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got NaN or inf values")
    return arr


def _view(
    centres: np.ndarray,
    radii: np.ndarray,
    eigs: np.ndarray | None,
    max_view: float,
) -> tuple[tuple[float, float, float, float], bool]:
    """Axis limits that show the unit circle, the eigenvalues and the discs.

    The discs can be huge (a large weight scale gives radii of tens); they are
    cut at ``max_view`` (or just beyond the largest eigenvalue, if that is
    further out) so that the picture stays readable. Returns the limits and
    whether a disc was cut.
    """
    x0, x1 = float(np.min(centres.real - radii)), float(np.max(centres.real + radii))
    y0, y1 = float(np.min(centres.imag - radii)), float(np.max(centres.imag + radii))
    x0, x1, y0, y1 = min(x0, -1.0), max(x1, 1.0), min(y0, -1.0), max(y1, 1.0)
    if eigs is not None and eigs.size:
        x0, x1 = min(x0, eigs.real.min()), max(x1, eigs.real.max())
        y0, y1 = min(y0, eigs.imag.min()), max(y1, eigs.imag.max())
    cap = max_view
    if eigs is not None and eigs.size:
        cap = max(cap, 1.1 * float(np.abs(eigs).max()))
    clipped = min(x0, y0) < -cap or max(x1, y1) > cap
    x0, x1, y0, y1 = (max(v, -cap) if v < 0 else min(v, cap) for v in (x0, x1, y0, y1))
    pad = 0.08 * max(x1 - x0, y1 - y0)
    return (x0 - pad, x1 + pad, y0 - pad, y1 + pad), clipped


def plot_discs(
    centres: Any,
    radii: Any,
    eigenvalues: Any = None,
    ax: Axes | None = None,
    *,
    color: str | None = None,
    eigenvalue_color: str | None = None,
    alpha: float | None = None,
    unit_circle: bool = True,
    annotate: bool = True,
    legend: bool = True,
    view: float | Sequence[float] | None = None,
    max_view: float = 4.0,
    title: str | None = None,
    markersize: float = 16.0,
) -> Axes:
    r"""Draw Geršgorin discs (and eigenvalues) in the complex plane.

    Each disc :math:`\{z : |z - c_i| \le r_i\}` is a translucent circle, so
    regions covered by many discs look darker; the eigenvalues are dots, the
    unit circle (the boundary between shrinking and growing directions) is
    dashed.

    Args:
        centres: disc centres :math:`c_i`, ``(n,)``, real or complex (tensor,
            array or sequence), e.g. from :func:`rhn.analysis.gershgorin_discs`.
        radii: disc radii :math:`r_i \ge 0`, ``(n,)``.
        eigenvalues: optional eigenvalues ``(m,)`` to draw as dots (default
            ``None``).
        ax: the axes to draw on; a new 4.2 x 4.2 inch figure if ``None``.
        color: disc colour (default ``COLORS["disc"]``).
        eigenvalue_color: dot colour (default ``COLORS["eigenvalue"]``).
        alpha: opacity of each disc's fill. The default ``None`` picks it
            from the number of discs ``n`` so that a point covered by all of
            them is about 70% opaque and one covered by a single disc is still
            visible; the outlines are drawn more opaque, so every disc shows.
        unit_circle: draw the unit circle (default ``True``).
        annotate: write the spectral radius :math:`\rho = \max |\lambda|`, and
            a note when discs are cut by the view, above the axes and under
            the title, where they cover no disc (default ``True``).
        legend: draw a legend (default ``True``).
        view: fixed limits: a half-width ``L`` for the square
            :math:`[-L, L]^2`, or ``(xmin, xmax, ymin, ymax)``. Widgets pass
            one so the axes do not jump while a slider moves. Default ``None``
            fits the unit circle, the eigenvalues and the discs.
        max_view: with ``view=None``, the largest half-width shown (default
            ``4.0``, widened to show every eigenvalue); bigger discs are cut
            and the note says how far they reach.
        title: axes title (default none).
        markersize: eigenvalue marker area in points² (default ``16``).

    Returns:
        The axes, with equal aspect ratio and the axes labelled ``Re`` and
        ``Im``.
    """
    import matplotlib.pyplot as plt  # only needed for a new figure

    c = _as_array("centres", centres, complex_ok=True).astype(complex)
    r = _as_array("radii", radii, complex_ok=False).astype(float)
    if c.shape != r.shape or c.size == 0:
        raise ValueError(
            f"centres and radii must have the same non-empty shape (n,), got "
            f"{_checks.shape_str(c.shape)} and {_checks.shape_str(r.shape)}"
        )
    if (r < 0).any():
        raise ValueError("radii must be >= 0")
    eigs = None
    if eigenvalues is not None:
        eigs = _as_array("eigenvalues", eigenvalues, complex_ok=True).astype(complex)
    max_view = _checks.real("max_view", max_view)
    if max_view <= 0:
        raise ValueError(f"max_view must be > 0, got {max_view}")
    if view is None:
        limits, clipped = _view(c, r, eigs, max_view)
    else:
        if isinstance(view, (int, float)) and not isinstance(view, bool):
            half = _checks.real("view", view)
            limits = (-half, half, -half, half)
        elif isinstance(view, Sequence) and len(view) == 4:
            limits = tuple(_checks.real("view", v) for v in view)
        else:
            raise TypeError(
                f"view must be a half-width L or (xmin, xmax, ymin, ymax), got {view!r}"
            )
        if limits[0] >= limits[1] or limits[2] >= limits[3]:
            raise ValueError(f"view must have xmin < xmax and ymin < ymax, got {view}")
        clipped = bool(
            (c.real - r < limits[0]).any()
            or (c.real + r > limits[1]).any()
            or (c.imag - r < limits[2]).any()
            or (c.imag + r > limits[3]).any()
        )
    if alpha is None:
        # (1 - alpha)^n = 0.3: the union never turns into a solid blob
        alpha = float(np.clip(1.0 - 0.3 ** (1.0 / c.size), 0.02, 0.25))
    else:
        alpha = _checks.real("alpha", alpha)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    color = color or COLORS["disc"]
    eigenvalue_color = eigenvalue_color or COLORS["eigenvalue"]
    if ax is None:
        _, ax = plt.subplots(figsize=(4.2, 4.2))

    ax.axhline(0.0, color="#bbbbbb", lw=0.6, zorder=0)
    ax.axvline(0.0, color="#bbbbbb", lw=0.6, zorder=0)
    discs = PatchCollection(
        [Circle((z.real, z.imag), rad) for z, rad in zip(c, r, strict=True)],
        facecolor=to_rgba(color, alpha),
        edgecolor=to_rgba(color, max(alpha, 0.35)),
        linewidth=0.7,
        zorder=1,
    )
    ax.add_collection(discs)
    # the centres, so that zero-radius discs still show
    ax.scatter(c.real, c.imag, s=6, color=color, marker="+", lw=0.8, zorder=2)
    handles: list[Any] = [
        Patch(facecolor=to_rgba(color, 0.3), edgecolor=color, label="Geršgorin discs")
    ]
    if unit_circle:
        ax.add_patch(
            Circle(
                (0.0, 0.0),
                1.0,
                fill=False,
                ls="--",
                lw=1.0,
                color=COLORS["unit_circle"],
                zorder=2.5,
                # a white halo keeps the circle visible on top of dense discs
                path_effects=[patheffects.withStroke(linewidth=2.6, foreground="w")],
            )
        )
        handles.append(
            Line2D([], [], ls="--", color=COLORS["unit_circle"], label="unit circle")
        )
    if eigs is not None:
        ax.scatter(
            eigs.real,
            eigs.imag,
            s=markersize,
            color=eigenvalue_color,
            edgecolor="white",
            linewidth=0.4,
            zorder=3,
        )
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker="o",
                color=eigenvalue_color,
                markersize=5,
                label="eigenvalues",
            )
        )
    ax.set_xlim(limits[0], limits[1])
    ax.set_ylim(limits[2], limits[3])
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("Re")
    ax.set_ylabel("Im")
    lines = []
    if annotate and eigs is not None and eigs.size:
        lines.append(rf"$\rho = {np.abs(eigs).max():.3g}$")
    if annotate and clipped:
        reach = float((np.abs(c) + r).max())
        lines.append(f"discs reach |z| = {reach:.3g} (cut)")
    pad = matplotlib.rcParams["axes.titlepad"]
    if lines:
        # above the frame, under the title: inside the axes, a corner note
        # covered the tops of the discs (a phone's narrower drawing keeps the
        # text's size and shrinks the axes, so any corner could be taken)
        note = ax.annotate(
            "\n".join(lines),
            xy=(0.5, 1.0),
            xycoords="axes fraction",
            xytext=(0, 3),
            textcoords="offset points",
            va="bottom",
            ha="center",
            fontsize="small",
            zorder=4,
        )
        pad += 3 + 1.25 * note.get_fontsize() * len(lines)
    if title is not None:
        ax.set_title(title, pad=pad)
    if legend:
        ax.legend(handles=handles, loc="lower right", fontsize="small", framealpha=0.8)
    return ax


def plot_spectrum(
    J: torch.Tensor,
    ax: Axes | None = None,
    *,
    columns: bool = False,
    **style: Any,
) -> Axes:
    r"""Geršgorin discs and eigenvalues of one square matrix ``J``.

    A convenience over :func:`rhn.analysis.gershgorin_discs`,
    :func:`rhn.analysis.eigenvalues` and :func:`plot_discs`.

    Args:
        J: a square matrix ``(n, n)``.
        ax: the axes to draw on (default: a new figure).
        columns: draw the column discs instead of the row discs (default
            ``False``).
        **style: passed to :func:`plot_discs`.

    Returns:
        The axes.
    """
    if isinstance(J, torch.Tensor) and J.dim() != 2:
        raise ValueError(
            f"J must be one square matrix (n, n), got shape "
            f"{_checks.shape_str(J.shape)}; loop over a batch"
        )
    centres, radii = gershgorin_discs(J, columns=columns)
    return plot_discs(centres, radii, _eigenvalues(J), ax=ax, **style)


# --- gradient norm versus lag or layer (rhn.gradflow) --------------------------


def plot_gradient_norms(
    curves: dict[str, Any],
    ax: Axes | None = None,
    *,
    colors: dict[str, str] | None = None,
    styles: dict[str, str] | None = None,
    xlabel: str = "lag $n$ (steps before the end)",
    ylabel: str = "mean gradient norm",
    title: str | None = None,
    legend: bool = True,
    first: int = 1,
) -> Axes:
    r"""Gradient norm against lag (or layer) on a log scale, one line per curve.

    Made for :func:`rhn.gradflow.gradient_norms` and
    :func:`rhn.gradflow.layer_gradient_norms`. Zeros (an underflow) and
    non-finite values are left out of the line rather than drawn at the axis.

    Args:
        curves: ``{label: values}``, each a 1-D tensor, array or list.
        ax: the axes to draw on (default: a new figure).
        colors: ``{label: colour}``; a label without one takes the model
            style of :data:`MODEL_STYLES` whose key starts it (``"lstm"``,
            ``"RHN D=3"`` ...: colour, dash and marker), else the next
            colour of the axes' cycle.
        styles: ``{label: linestyle}`` (default: the model's, else solid).
        xlabel, ylabel, title: axis labels and title.
        legend: draw a legend (default ``True``).
        first: the x of each curve's first value (default 1: entry 0 of
            :func:`rhn.gradflow.gradient_norms` is the lag :math:`n = 1`;
            pass 0 for the layer index of ``layer_gradient_norms``).

    Returns:
        The axes.
    """
    import matplotlib.pyplot as plt

    if isinstance(first, bool) or not isinstance(first, int):
        raise TypeError(f"first must be an int, got {type(first).__name__}")
    if not isinstance(curves, dict) or not curves:
        raise TypeError("curves must be a non-empty dict {label: 1-D values}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    colors = colors or {}
    styles = styles or {}
    for label, values in curves.items():
        if hasattr(values, "detach"):
            values = values.detach().cpu().double().numpy()
        y = np.asarray(values, dtype=float)
        if y.ndim != 1:
            raise ValueError(
                f"curves[{label!r}] must be 1-D, got shape {tuple(y.shape)}"
            )
        y = np.where(np.isfinite(y) & (y > 0), y, np.nan)
        key = str(label).split()[0].lower() if str(label).split() else ""
        kw: dict[str, Any] = dict(MODEL_STYLES.get(key, {}))
        if label in colors:
            kw["color"] = colors[label]
        if label in styles:
            kw["linestyle"] = styles[label]
        if "marker" in kw:
            kw["markevery"] = max(1, len(y) // 8)
        ax.plot(first + np.arange(len(y)), y, label=str(label), **kw)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if legend:
        ax.legend()  # the style's size: a label's $b_T$ has its T at 7 pt
    return ax


__all__ += ["plot_gradient_norms"]


# Penn Treebank word-level perplexities at one parameter budget, by recurrence
# depth: (units, valid, test, valid tied, test tied), as reported by Zilly et
# al. (2017), the depth sweep published with the paper's code
PAPER_PTB_DEPTH: dict[int, tuple[int, float, float, float, float]] = {
    1: (1275, 92.4, 89.2, 93.2, 90.6),
    5: (1000, 72.0, 69.8, 69.7, 67.7),
    8: (890, 71.2, 68.5, 68.2, 66.1),
    10: (830, 71.3, 68.3, 68.3, 66.0),
}
"""The RHN paper's depth sweep on Penn Treebank (perplexity; lower is better)."""


def plot_paper_depth(
    sweep: dict[int, tuple[int, float, float, float, float]] | None = None,
    ax: Axes | None = None,
) -> Axes:
    r"""The RHN paper's depth sweep redrawn: perplexity against recurrence depth.

    Zilly et al. (2017) hold the number of parameters fixed and trade width for
    depth on Penn Treebank, then tie the input and output embeddings at the
    same widths (which makes those models smaller); this draws the
    perplexities they report (:data:`PAPER_PTB_DEPTH`), test as solid lines
    and validation dashed, without and with tied embeddings (circles and
    squares), each depth labelled with its width.

    Args:
        sweep: ``{depth: (units, valid, test, valid_tied, test_tied)}``
            (default: :data:`PAPER_PTB_DEPTH`).
        ax: the axes to draw on (default: a new figure).

    Returns:
        The axes.
    """
    import matplotlib.pyplot as plt

    sweep = PAPER_PTB_DEPTH if sweep is None else sweep
    if not isinstance(sweep, dict) or not sweep:
        raise TypeError("sweep must be a non-empty dict {depth: (units, 4 values)}")
    for depth, row in sweep.items():
        if len(row) != 5:
            raise ValueError(
                f"sweep[{depth!r}] must be (units, valid, test, valid_tied, "
                f"test_tied), got {row!r}"
            )
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    depths = sorted(sweep)
    series = [  # (column, label, colour, line style, marker)
        (2, "test", OKABE_ITO["blue"], "-", "o"),
        (1, "valid", OKABE_ITO["blue"], "--", "o"),
        (4, "test, tied embeddings", OKABE_ITO["orange"], "-", "s"),
        (3, "valid, tied embeddings", OKABE_ITO["orange"], "--", "s"),
    ]
    for column, label, color, ls, marker in series:
        ax.plot(
            depths,
            [sweep[d][column] for d in depths],
            color=color,
            linestyle=ls,
            marker=marker,
            label=label,
        )
    ax.set_xticks(depths, [f"D={d}\nH={sweep[d][0]}" for d in depths])
    ax.set_xlabel("recurrence depth $D$ and width $H$ (one parameter budget)")
    ax.set_ylabel("perplexity (lower is better)")
    ax.legend()
    return ax


__all__ += ["PAPER_PTB_DEPTH", "plot_paper_depth"]
