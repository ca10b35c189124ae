"""Sphinx extension: two fixes to the scripts of the book's pages.

1. sphinx-thebe 0.3.1 registers its inline configuration script
   (``const THEBE_JS_URL = ...``) after the HTML builder has started, and with
   Sphinx 7 the script then reaches every page twice; the second copy throws
   "Identifier 'THEBE_JS_URL' has already been declared". Exact duplicates
   (same file or body, same attributes) are dropped from each page.
2. The ipywidgets 8 widget manager (``@jupyter-widgets/html-manager``)
   typesets widget labels with the MathJax 2 call ``MathJax.Hub.Queue``, but
   the theme loads MathJax 3, so every widget page throws "Cannot read
   properties of undefined (reading 'Queue')". A small shim maps that call to
   MathJax 3's ``typesetPromise``.

The browser tests (``tests/browser``) fail on any uncaught page error, which is
how both were found.
"""

from __future__ import annotations

from typing import Any

# runs once the deferred MathJax 3 script has defined window.MathJax, and
# before the widget manager renders (it waits for the window's load event)
MATHJAX2_SHIM = """
document.addEventListener("DOMContentLoaded", function () {
  var mj = window.MathJax;
  if (mj && mj.version && !mj.Hub) {
    mj.Hub = {
      Queue: function (job) {
        var element = Array.isArray(job) ? job[2] : undefined;
        if (element && mj.typesetPromise) {
          mj.typesetPromise([element]).catch(function () {});
        }
      },
    };
  }
});
""".strip()


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


def setup(app: Any) -> dict[str, Any]:
    app.add_js_file(None, body=MATHJAX2_SHIM)
    app.connect("html-page-context", _unique_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
