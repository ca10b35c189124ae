"""Sphinx extension: fixes to the scripts and styles of the book's pages.

1. sphinx-thebe 0.3.1 registers its inline configuration script
   (``const THEBE_JS_URL = ...``) after the HTML builder has started, and with
   Sphinx 7 the script then reaches every page twice; the second copy throws
   "Identifier 'THEBE_JS_URL' has already been declared". Exact duplicates
   (same file or body, same attributes) are dropped from each page.
2. ``_ext/static/`` joins the site's static files: ``rhn-site.js`` makes the
   visible sidebar and page-contents buttons work (the theme binds hidden
   copies), ``rhn-site.css`` leaves one search box and puts the interactive
   figures on a light card in dark mode, ``widget-loader.js`` draws the
   widgets (``_ext/widget_scripts.py``).
3. MathJax comes from the site: the version pinned in ``package.json`` is
   copied from ``node_modules`` (``npm ci``) into ``_static/mathjax/``, and
   ``mathjax_path`` in ``_config.yml`` points there. Only the combined
   ``tex-mml-chtml.js`` and the folders it loads from on demand are copied.

The browser tests (``tests/browser``) fail on any uncaught page error and on
any request that leaves the site, which is how these were found.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.errors import ExtensionError

STATIC = Path(__file__).with_name("static")
MATHJAX = Path(__file__).resolve().parents[1] / "node_modules" / "mathjax" / "es5"
# tex-mml-chtml.js and what it may load later: TeX extensions (\require, or
# packages a page asks for), the CHTML fonts, the menu and accessibility parts
MATHJAX_PARTS = ("tex-mml-chtml.js", "input", "output/chtml", "ui", "a11y", "sre")


def _unique_scripts(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    unique = []
    for script in scripts:
        attributes = getattr(script, "attributes", {}) or {}
        # the same script is registered once with filename None and once with ""
        name = getattr(script, "filename", script) or ""
        key = (str(name), tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique  # a new list: the builder reuses its own


def _add_static(app: Any, config: Any) -> None:
    config.html_static_path = [*config.html_static_path, str(STATIC)]


def _check_mathjax(app: Any) -> None:
    if app.builder.format == "html" and not (MATHJAX / MATHJAX_PARTS[0]).is_file():
        raise ExtensionError(
            f"MathJax is missing from {MATHJAX.parent} (run `npm ci` in the "
            "repository root): the site serves its own copy"
        )


def _copy_mathjax(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        source, dest = MATHJAX / part, target / part
        if source.is_dir():
            shutil.copytree(source, dest, dirs_exist_ok=True)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", _add_static)
    app.connect("builder-inited", _check_mathjax)
    app.connect("build-finished", _copy_mathjax)
    app.add_js_file("rhn-site.js")
    app.add_css_file("rhn-site.css")
    app.connect("html-page-context", _unique_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
