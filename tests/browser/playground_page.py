"""A stand-alone page with the training playground, for tests and the benchmark.

The page of ``harness.py`` (the bundled ES module, rendered with a stand-in
for the anywidget model) with the playground's bundle and state.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rhn.widgets.playground import PLAYGROUND_BUNDLE, PLAYGROUND_CLASS, Playground

from .harness import PAGE

# plays the widget for `ms` milliseconds from a fresh start and returns its numbers
PLAY_JS = """async (ms) => {
    const root = document.querySelector('.rhn-playground-root');
    root.querySelector('button[name=reset]').click();
    const play = root.querySelector('button[name=play]');
    play.click();
    await new Promise(r => setTimeout(r, ms));
    play.click();
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    return {
        numbers: JSON.parse(root.dataset.rhnNumbers),
        steps_per_s: Number(root.dataset.rhnStepsPerS),
    };
}"""


def playground_page(fig: Playground, folder: Path) -> Path:
    """Write the page for ``fig`` into ``folder``; returns ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PLAYGROUND_BUNDLE, folder / "widget.js")
    state = {"data": fig.data, "values": fig.values}
    text = json.dumps(state).replace("</", "<\\/")  # safe inside <script>
    (folder / "index.html").write_text(
        PAGE.format(dom_class=PLAYGROUND_CLASS, state=text), encoding="utf-8"
    )
    return folder
