"""A page that shows one rhn widget without Jupyter, for tests and benchmarks.

:func:`harness_page` writes ``index.html`` and a copy of the bundled ES module
into a folder: the page imports the module and calls its ``render`` with a
minimal stand-in for the anywidget model (``get``, ``set``, ``on``,
``save_changes``), holding the state of a real :class:`rhn.widgets.InteractiveFigure`.
Serve the folder (``tests.browser.server.serve``) and open it in Chromium.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rhn.widgets import DOM_CLASS, InteractiveFigure
from rhn.widgets.interactive import BUNDLE

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>rhn widget</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<div id="root" class="{dom_class}"></div>
<script type="application/json" id="state">{state}</script>
<script type="module">
import widget from "./widget.js";
const state = JSON.parse(document.getElementById("state").textContent);
const listeners = {{}};
const model = {{
  get: (key) => state[key],
  set: (key, value) => {{ state[key] = value; }},
  save_changes() {{}},
  send() {{}},
  on(name, callback) {{ (listeners[name] ||= []).push(callback); }},
  off() {{}},
}};
widget.render({{ model, el: document.getElementById("root") }});
window.rhnModel = model;
</script>
</body></html>
"""


def harness_page(fig: InteractiveFigure, folder: Path) -> Path:
    """Write the page for ``fig`` into ``folder``; returns ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(BUNDLE, folder / "widget.js")
    state = {"data": fig.data, "values": fig.values}
    text = json.dumps(state).replace("</", "<\\/")  # safe inside <script>
    (folder / "index.html").write_text(
        PAGE.format(dom_class=DOM_CLASS, state=text), encoding="utf-8"
    )
    return folder
