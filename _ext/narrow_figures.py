"""Sphinx extension: a phone is served each figure drawn for its column.

A chapter's figure is drawn for the laptop's column (about 640 CSS px); a
390 px phone shows it 342 px wide, and its 9 pt text at about 6.7 px.
``rhn.plots.use_style`` shows figures through
:func:`rhn.plots.figure_png_for_phone`, which, for a figure whose text would
be under 10.5 px on a phone, draws it again narrower (a row of panels stacked)
and puts that PNG in the output's metadata (``rhn:narrow``). This extension

1. writes that PNG next to the figure's own when MyST-NB renders the output,
   and remembers which figure it belongs to;
2. once the pages are written, copies it to ``_images/`` and wraps the
   figure's ``<img>`` in a ``<picture>`` whose ``<source>`` gives a screen at
   most :data:`PHONE_MEDIA` wide the narrow drawing. The ``<img>`` (the laptop's
   drawing) stays what every other browser, and a reader without JavaScript,
   gets;
3. a figure that has no narrow drawing (one whose legend or labels would not
   fit a phone's column) and whose text a phone would show under 10.5 px is
   shown there at the width where its text is 10.5 px (and its superscripts
   and subscripts 9 px), in a box that scrolls sideways
   (``rhn-wide-figure``; rhn-site.css and rhn-site.js draw the scroll cue).
   Where its text is still 9.5 px at the column's own width, rhn-site.js
   fits it to the column instead (``rhn-wide-fits``), using
   :data:`MIN_TEXT_PX` as its ``WIDE_READ_TEXT_PX``.

The browser tests measure the smallest text of the drawing each size shows
(``tests/browser/test_reader.py``).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from binascii import a2b_base64
from pathlib import Path, PurePosixPath
from typing import Any

NARROW_KEY = "rhn:narrow"  # rhn.plots.NARROW_KEY (the package is not imported here)
PHONE_MEDIA = "(max-width: 600px)"


def _patch_myst_nb() -> None:
    from myst_nb.core.render import NbElementRenderer

    original = NbElementRenderer.render_image
    if getattr(original, "rhn_narrow", False):
        return

    def render_image(self: Any, data: Any) -> list[Any]:
        result = original(self, data)
        meta = data.output_metadata.get(data.mime_type, {})
        narrow = meta.get(NARROW_KEY) if isinstance(meta, dict) else None
        env = self.renderer.sphinx_env
        if not narrow or not result or env is None or "uri" not in result[0]:
            return result
        png = a2b_base64(narrow["png"])
        name = f"{hashlib.sha256(png).hexdigest()}.png"
        uri = self.write_file([name], png, overwrite=False, exists_ok=True)
        source = Path(env.srcdir) / uri.lstrip("/")
        figures = _figures(env).setdefault(env.docname, {})
        figures[PurePosixPath(result[0]["uri"]).name] = str(source)
        return result

    render_image.rhn_narrow = True  # type: ignore[attr-defined]
    NbElementRenderer.render_image = render_image


def _figures(env: Any) -> dict[str, dict[str, str]]:
    """``{docname: {figure's file name: its narrow drawing's path}}``."""
    if not hasattr(env, "rhn_narrow_figures"):
        env.rhn_narrow_figures = {}
    return env.rhn_narrow_figures


def _purge(app: Any, env: Any, docname: str) -> None:
    _figures(env).pop(docname, None)


def _merge(app: Any, env: Any, docnames: set[str], other: Any) -> None:
    for docname in docnames:
        if docname in _figures(other):
            _figures(env)[docname] = _figures(other)[docname]


def picture(html: str, figure: str, narrow: str) -> str:
    """``html`` with the ``<img>`` of ``_images/<figure>`` in a ``<picture>``.

    The ``<source>`` offers ``_images/<narrow>`` to a screen at most
    :data:`PHONE_MEDIA` wide; an ``<img>`` already in a ``<picture>`` is left.
    """
    tag = re.compile(
        r'(?<!type="image/png">)<img\b[^>]*\bsrc="(?P<dir>[^"]*_images/)'
        + re.escape(figure)
        + '"[^>]*>'
    )

    def wrap(m: re.Match[str]) -> str:
        src = m.group("dir") + narrow
        return (
            f'<picture><source media="{PHONE_MEDIA}" srcset="{src}" '
            f'type="image/png">{m.group(0)}</picture>'
        )

    return tag.sub(wrap, html)


PHONE_COLUMN_PX = 342  # rhn.plots.PHONE_COLUMN_PX
MIN_TEXT_PX = 10.7  # rhn.plots.PHONE_TEXT_PX (10.5), and a little to spare
# a figure's superscripts and subscripts (rhn.plots.SCRIPT_PX, 9 px) at the
# read width: still 9 px where rhn-site.js fits it to the column (its text
# down from MIN_TEXT_PX to WIDE_FIT_TEXT_PX, 9.5 px)
MIN_SCRIPT_PX = 9.0 * MIN_TEXT_PX / 9.5
_IMG = re.compile(
    r'(?<!type="image/png">)<img\b[^>]*\bsrc="[^"]*_images/([^"/]+\.png)"[^>]*>'
)


def readable_width(png: bytes) -> float | None:
    """CSS px at which a ``rhn.plots`` PNG's smallest text is :data:`MIN_TEXT_PX`
    and its smallest superscript or subscript at least :data:`MIN_SCRIPT_PX`."""
    from rhn.plots import png_facts, smallest_script_px

    width, dpi, pt = png_facts(png)
    if pt is None or not 0 < pt < float("inf"):
        return None  # not a figure of the book's style, or one without text
    need = MIN_TEXT_PX * 72 * width / (pt * dpi)
    script = smallest_script_px(png, need)  # at the width its text needs
    if script is not None and script < MIN_SCRIPT_PX:
        need *= MIN_SCRIPT_PX / script
    return need


def scroll_wide(html: str, images: Path) -> str:
    """``html`` with each figure too small to read on a phone in a scroll box."""

    def wrap(m: re.Match[str]) -> str:
        file = images / m.group(1)
        if m.group(1).endswith("-phone.png") or not file.is_file():
            return m.group(0)
        if (
            html.endswith('">', 0, m.start())
            and "rhn-wide-figure" in html[max(0, m.start() - 90) : m.start()]
        ):
            return m.group(0)  # wrapped by an earlier build
        need = readable_width(file.read_bytes())
        if need is None or need <= PHONE_COLUMN_PX:
            return m.group(0)
        return (
            f'<span class="rhn-wide-figure" style="--rhn-read-width: {need:.0f}px">'
            f"{m.group(0)}</span>"
        )

    return _IMG.sub(wrap, html)


def _write(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for docname in app.env.found_docs:
        figures = _figures(app.env).get(docname, {})
        page = out / f"{docname}.html"
        if not page.is_file():
            continue
        html = page.read_text(encoding="utf-8")
        new = html
        for figure, source in figures.items():
            narrow = Path(source)
            if not narrow.is_file():
                continue
            name = f"{Path(figure).stem}-phone.png"
            (out / "_images").mkdir(exist_ok=True)
            shutil.copyfile(narrow, out / "_images" / name)
            new = picture(new, figure, name)
        new = scroll_wide(new, out / "_images")
        if new != html:
            page.write_text(new, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    _patch_myst_nb()
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
