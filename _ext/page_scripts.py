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
3. MathJax comes from the site: the version pinned in ``package.json`` (4.x)
   is copied from ``node_modules`` (``npm ci``) into ``_static/mathjax/``, and
   ``mathjax_path`` in ``_config.yml`` points there. Only the combined
   ``tex-mml-chtml.js`` and the folders it loads from on demand are copied,
   and its font's CHTML files (``@mathjax/mathjax-newcm-font``) go to
   ``_static/mathjax/fonts/``, where ``mathjax3_config`` tells MathJax to look
   (it would ask a CDN). A page without a formula does not load MathJax
   (MyST-NB asks Sphinx to put it on every page): 1 MB less on the index.

4. The theme's icons without its 1.5 MB script: pydata-sphinx-theme turns
   every ``<i class="fa-solid fa-bars">`` into an SVG with Font Awesome's
   ``fontawesome.js``, which holds all 2,000 icons. Once the pages are
   written, their tag for that script is removed and they load
   ``rhn-icons.css`` instead: for the icons the site uses (about 20), a CSS
   mask made from the same icon's path, cut from that script.

5. One ``<meta name="viewport">`` a page: Sphinx's basic layout, the
   pydata theme and the book theme each write one (three in all).

6. Light colours without JavaScript: the theme writes ``data-theme="auto"``
   on ``<html>``, which no stylesheet colours; its inline script replaces it
   at once, so the tag says ``light`` for a reader without JavaScript only.

7. No dead buttons without JavaScript: the sidebar and page-contents toggles
   and the header's drop-down menus do nothing without it, so a
   ``<noscript>`` style in the page's head hides them (the previous / next
   links at the page's end still lead through the book).

8. "Skip to main content" skips to the page's text: the theme's link leads to
   ``<main>``, which starts with the header's buttons (five more Tab stops
   before the first heading); it leads to the ``<article>`` instead.

The browser tests (``tests/browser``) fail on any uncaught page error and on
any request that leaves the site, which is how these were found.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sphinx.errors import ExtensionError

STATIC = Path(__file__).with_name("static")
NODE_MODULES = Path(__file__).resolve().parents[1] / "node_modules"
MATHJAX = NODE_MODULES / "mathjax"
# tex-mml-chtml.js and what it may load later: TeX extensions (\require, or
# packages a page asks for), the output jax, the menu and accessibility parts
MATHJAX_PARTS = ("tex-mml-chtml.js", "input", "output", "ui", "a11y", "sre")
# the font's web fonts and the glyph ranges it loads on demand; MathJax finds
# them at [fonts]/mathjax-newcm-font/chtml, [fonts] = _static/mathjax/fonts
MATHJAX_FONT = NODE_MODULES / "@mathjax" / "mathjax-newcm-font"
MATHJAX_FONT_PARTS = ("chtml",)
# what in a page's HTML needs MathJax: Sphinx's delimiters (mathjax_inline,
# mathjax_display), amsmath blocks, and MyST-NB's math outputs
_MATH_MARKS = ("\\(", "\\[", "\\begin{", 'class="math')


FONTAWESOME = "scripts/fontawesome.js"  # under _static/, from the theme
ICONS_CSS = "rhn-icons.css"
# "name":[width,height,[aliases],"unicode","path"] in fontawesome.js (the
# quotes only where the name is not an identifier: bars:[...]); each
# family's table is followed by its registration, ("fab",p) / ("far",p) ...
_ICON = re.compile(
    r'(?:"([a-z0-9-]+)"|\b([a-z][a-z0-9]*)):\[(\d+),(\d+),\[([^\]]*)\],'
    r'"[0-9a-f]+","(M[^"]*)"\]'
)
# the theme's template writes this tag itself (not through script_files)
_FA_TAG = re.compile(
    r'<script defer src="[^"]*scripts/fontawesome\.js[^"]*"></script>\n?'
)
_FAMILY_END = re.compile(r'\("(fa[brs])",[A-Za-z_$][\w$]*\)')
_FAMILY_CLASSES = {
    "fab": ("fa-brands", "fab"),
    "far": ("fa-regular", "far"),
    "fas": ("fa-solid", "fas"),
}
_USED = re.compile(r'class="([^"]*\bfa-[^"]*)"')
_VIEWPORT = re.compile(r'[ \t]*<meta name="viewport"[^>]*>\n?')


_AUTO_THEME = re.compile(r'(<html\b[^>]*\bdata-theme=")auto(")')


def light_without_script(html: str) -> str:
    """``html`` whose ``<html>`` tag says ``data-theme="light"``, not auto."""
    return _AUTO_THEME.sub(r"\g<1>light\g<2>", html, count=1)


# what needs JavaScript to do anything; hidden for a reader without it
NOSCRIPT_STYLE = (
    "<noscript><style>.sidebar-toggle, .dropdown-toggle, .pst-js-only "
    "{ display: none !important; }</style></noscript>"
)


def hide_script_buttons(html: str) -> str:
    """``html`` with :data:`NOSCRIPT_STYLE` before ``</head>``, once."""
    if NOSCRIPT_STYLE in html or "</head>" not in html:
        return html
    return html.replace("</head>", NOSCRIPT_STYLE + "\n</head>", 1)


_SKIP = '<a href="#main-content">Skip to main content</a>'
_ARTICLE = '<article class="bd-article">'
# the article once skip_to_article has given it the skip link's target
_ARTICLE_TARGET = '<article class="bd-article" id="rhn-article" tabindex="-1">'


def skip_to_article(html: str) -> str:
    """``html`` whose skip link leads to the article, past the header buttons."""
    if _SKIP not in html or _ARTICLE not in html:
        return html
    html = html.replace(_SKIP, _SKIP.replace("#main-content", "#rhn-article"), 1)
    return html.replace(_ARTICLE, _ARTICLE_TARGET, 1)


def one_viewport(html: str) -> str:
    """``html`` with its first ``<meta name="viewport">`` tag only."""
    tags = iter(range(1 << 30))
    return _VIEWPORT.sub(lambda m: m.group(0) if next(tags) == 0 else "", html)


def icon_paths(script: str) -> dict[str, dict[str, tuple[int, int, str]]]:
    """``{family: {icon name or alias: (width, height, SVG path)}}``."""
    ends = [(m.start(), m.group(1)) for m in _FAMILY_END.finditer(script)]
    icons: dict[str, dict[str, tuple[int, int, str]]] = {f: {} for f in _FAMILY_CLASSES}
    for m in _ICON.finditer(script):
        family = next((f for end, f in ends if m.start() < end), None)
        if family is None:
            continue
        shape = (int(m.group(3)), int(m.group(4)), m.group(6))
        aliases = re.findall(r'"([a-z0-9-]+)"', m.group(5))
        for name in [m.group(1) or m.group(2), *aliases]:
            icons[family].setdefault(name, shape)
    return icons


def icons_css(icons: dict[str, dict[str, tuple[int, int, str]]], used: set[str]) -> str:
    """CSS that draws the ``used`` icon classes ("fa-solid fa-bars") as masks."""
    classes = [c for names in _FAMILY_CLASSES.values() for c in names]
    base = ", ".join(f"i.{c}" for c in classes)
    rules = [
        f"{base} {{ display: inline-block; width: 1.25em; height: 1em; "
        "vertical-align: -0.125em; background-color: currentColor; "
        "-webkit-mask: var(--rhn-icon) center / contain no-repeat; "
        "mask: var(--rhn-icon) center / contain no-repeat; }"
    ]
    for family, (long, short) in _FAMILY_CLASSES.items():
        for name in sorted(used):
            if name not in icons[family]:
                continue
            width, height, path = icons[family][name]
            svg = (
                "<svg xmlns='http://www.w3.org/2000/svg' "
                f"viewBox='0 0 {width} {height}'><path d='{path}'/></svg>"
            )
            url = "data:image/svg+xml," + quote(svg, safe=" /=:',")
            rules.append(
                f'.{long}.fa-{name}, .{short}.fa-{name} {{ --rhn-icon: url("{url}"); }}'
            )
    return "\n".join(rules) + "\n"


def _write_icons(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    script = out / "_static" / FONTAWESOME
    if not script.is_file():
        raise ExtensionError(f"{script} is missing: the theme no longer ships it")
    used = set()
    for page in out.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        for classes in _USED.findall(html):
            used |= {c[3:] for c in classes.split() if c.startswith("fa-")}
        # a page that an incremental build left as it was may lack the link
        # to rhn-icons.css: it keeps the icon script
        lighter = skip_to_article(
            hide_script_buttons(light_without_script(one_viewport(html)))
        )
        if ICONS_CSS in html:
            lighter = _FA_TAG.sub("", lighter)
        if lighter != html:
            page.write_text(lighter, encoding="utf-8")
    css = icons_css(icon_paths(script.read_text(encoding="utf-8")), used)
    (out / "_static" / ICONS_CSS).write_text(css, encoding="utf-8")


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
    if not has_math(context.get("body", "")):
        mathjax = app.config.mathjax_path
        unique = [s for s in unique if not _is_mathjax(s, mathjax)]
    context["script_files"] = unique  # a new list: the builder reuses its own


def has_math(body: str) -> bool:
    """Whether a page's HTML body holds anything MathJax would typeset."""
    return any(mark in body for mark in _MATH_MARKS)


def _is_mathjax(script: Any, mathjax_path: str) -> bool:
    name = str(getattr(script, "filename", script) or "")
    body = str((getattr(script, "attributes", {}) or {}).get("body", ""))
    if body.startswith("window.MathJax"):
        return True
    return bool(mathjax_path) and name.endswith(mathjax_path)


def _add_static(app: Any, config: Any) -> None:
    config.html_static_path = [*config.html_static_path, str(STATIC)]


def _check_mathjax(app: Any) -> None:
    if app.builder.format != "html":
        return
    for folder, part in ((MATHJAX, MATHJAX_PARTS[0]), (MATHJAX_FONT, "chtml")):
        if not (folder / part).exists():
            raise ExtensionError(
                f"{folder / part} is missing (run `npm ci` in the repository "
                "root): the site serves its own copy of MathJax and its font"
            )


def _copy_mathjax(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "mathjax"
    font_target = target / "fonts" / MATHJAX_FONT.name
    parts = [(MATHJAX / p, target / p) for p in MATHJAX_PARTS]
    parts += [(MATHJAX_FONT / p, font_target / p) for p in MATHJAX_FONT_PARTS]
    for source, dest in parts:
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
    app.add_css_file(ICONS_CSS)
    app.connect("build-finished", _write_icons)
    app.connect("html-page-context", _unique_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
