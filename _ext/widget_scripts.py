"""Sphinx extension: the pages with widgets load every widget script from the site.

A page with widgets (chapters 4, 7 and 8) needs require.js, the ipywidgets
HTML widget manager (``@jupyter-widgets/html-manager``, ``embed-amd.js``) and
anywidget's front-end module, which runs the ES module saved in the widget
state. By default MyST-NB and the manager fetch all three from a public CDN;
a dead or blocked CDN would leave the figures blank. This extension

1. copies them into the built site, under ``_static/rhn-widgets/``: require.js
   and the manager from ``node_modules`` (the versions pinned in
   ``package.json``; ``npm ci`` installs them), anywidget's module from the
   installed ``anywidget`` Python package (``nbextension/index.js``, the AMD
   build, the same file as the npm package's ``dist/index.js``);
2. on every page that loads the manager, points its
   ``data-jupyter-widgets-cdn`` at that folder (relative to the page) and
   maps the module name ``anywidget`` to the local copy with a
   ``require.config`` call, so the manager's first attempt, ``require(["anywidget"])``,
   finds it and never falls back to a CDN.

``_config.yml`` names the local files in ``nb_ipywidgets_js``. The browser
tests (``tests/browser``) block every request that leaves the site except
MathJax's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[1]
NODE_MODULES = ROOT / "node_modules"
FOLDER = "rhn-widgets"  # under _static/
MANAGER_SCRIPT = f"{FOLDER}/html-manager/embed-amd.js"
REQUIRE_SCRIPT = f"{FOLDER}/require.js"
FONT_SUFFIXES = {".woff", ".woff2", ".ttf", ".eot", ".svg"}


def _anywidget_module() -> Path:
    import anywidget

    return Path(anywidget.__file__).parent / "nbextension" / "index.js"


def sources() -> dict[str, Path]:
    """``{path under _static/rhn-widgets: source file}`` of every script copied."""
    manager = NODE_MODULES / "@jupyter-widgets" / "html-manager" / "dist"
    files = {
        "require.js": NODE_MODULES / "requirejs" / "require.js",
        "html-manager/embed-amd.js": manager / "embed-amd.js",
        "anywidget.js": _anywidget_module(),
    }
    if manager.is_dir():
        # the fonts of the manager's stylesheet, loaded relative to embed-amd.js
        for font in sorted(manager.iterdir()):
            if font.suffix in FONT_SUFFIXES:
                files[f"html-manager/{font.name}"] = font
    return files


def _check_sources(app: Any) -> None:
    if app.builder.format != "html":
        return
    missing = [str(p) for p in sources().values() if not p.is_file()]
    if missing:
        raise ExtensionError(
            "the widget scripts are missing (run `npm ci` in the repository "
            "root): " + ", ".join(missing)
        )


def _copy(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / FOLDER
    for name, source in sources().items():
        dest = target / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)


def _local_widget_scripts(
    app: Any, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    from sphinx.builders.html._assets import _JavaScript

    scripts = context.get("script_files") or []
    manager = [
        s
        for s in scripts
        if str(getattr(s, "filename", "") or "").endswith(MANAGER_SCRIPT)
    ]
    if not manager:
        return
    folder = context["pathto"](f"_static/{FOLDER}/", 1)
    anywidget = context["pathto"](f"_static/{FOLDER}/anywidget", 1)
    out = []
    for script in scripts:
        if script in manager:
            attributes = dict(script.attributes)
            attributes["data-jupyter-widgets-cdn"] = folder
            script = _JavaScript(
                script.filename, priority=script.priority, **attributes
            )
        out.append(script)
    # after require.js (priority 500) and before the manager renders (on load)
    config = {"paths": {"anywidget": anywidget}}
    out.append(
        _JavaScript(None, priority=501, body=f"require.config({json.dumps(config)});")
    )
    context["script_files"] = out


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _check_sources)
    app.connect("html-page-context", _local_widget_scripts, priority=800)
    app.connect("build-finished", _copy)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
