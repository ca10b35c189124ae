"""Sphinx extension: the pages with widgets draw them with a small loader.

A page with widgets (chapters 4, 7 and 9) holds the widget state that
MyST-NB saves from the executed notebook. The Jupyter way to draw it is
require.js plus the ipywidgets HTML widget manager (``embed-amd.js``, 4.4 MB)
plus anywidget's front end, all to run one ES module of about 85 KB. Our
widgets are all anywidget widgets, whose state carries that module (the
``_esm`` trait), so this extension

1. has MyST-NB load ``_ext/static/widget-loader.js`` (about 4 KB; in the
   site as ``_static/widget-loader.js``, see ``_ext/page_scripts.py``) on
   every page with widgets instead: ``_config.yml`` names it in
   ``nb_ipywidgets_js``. It imports each widget's module and calls its
   ``render`` with a small model (see the file's header), as soon as the
   page is parsed: the figures are drawn before the deferred MathJax runs;
2. keeps the figure's PNG (the starting setting, drawn by matplotlib) next to
   the widget view in the page, with class ``rhn-widget-fallback``: MyST-NB
   would keep only the view, so a reader without JavaScript would see
   nothing. The loader removes the PNG once the figure is drawn.

Nothing is loaded from outside the site; the browser tests
(``tests/browser``) block every request that leaves it and measure each
page's transfer.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FALLBACK_CLASS = "rhn-widget-fallback"


class KeepWidgetFallback(SphinxPostTransform):
    """Move a widget output's PNG into its widget-view container.

    MyST-NB renders every mime type of an output and then keeps one
    (``SelectMimeType``, priority 4); this runs just before it.
    """

    default_priority = 3

    def run(self, **kwargs: Any) -> None:
        for bundle in list(self.document.findall(nodes.container)):
            if bundle.get("nb_element") != "mime_bundle":
                continue
            by_type = {
                child.get("mime_type"): child
                for child in bundle.children
                if isinstance(child, nodes.container)
            }
            view, png = by_type.get(WIDGET_VIEW), by_type.get("image/png")
            if view is None or png is None:
                continue
            for image in list(png.findall(nodes.image)):
                image["classes"].append(FALLBACK_CLASS)
                image.parent.remove(image)
                view.append(image)


def setup(app: Any) -> dict[str, Any]:
    app.add_post_transform(KeepWidgetFallback)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
