"""Sphinx extension: a phone is served each figure drawn for its column.

A chapter's figure is drawn for the laptop's column (about 640 CSS px); a
390 px phone shows it 342 px wide, and its 9 pt text at about 6.7 px.
``rhn.plots.use_style`` shows figures through
:func:`rhn.plots.figure_png_for_phone`, which, for a figure whose text would
be under 9 px on a phone, draws it again narrower (a row of panels stacked)
and puts that PNG in the output's metadata (``rhn:narrow``). This extension

1. writes that PNG next to the figure's own when MyST-NB renders the output,
   and remembers which figure it belongs to;
2. once the pages are written, copies it to ``_images/`` and wraps the
   figure's ``<img>`` in a ``<picture>`` whose ``<source>`` gives a screen at
   most :data:`PHONE_MEDIA` wide the narrow drawing. The ``<img>`` (the laptop's
   drawing) stays what every other browser, and a reader without JavaScript,
   gets.

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


def _write(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for docname, figures in _figures(app.env).items():
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
        if new != html:
            page.write_text(new, encoding="utf-8")


def setup(app: Any) -> dict[str, Any]:
    _patch_myst_nb()
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
