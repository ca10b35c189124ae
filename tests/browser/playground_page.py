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

# resets the playground inside `root`, plays it to exactly `steps` training
# steps (data-rhn-stop-at) and returns its numbers and measured steps per second
PLAY_JS = """async ([root, steps]) => {
    const w = root.querySelector('.rhn-playground-root');
    w.dataset.rhnStopAt = String(steps);
    const numbers = () => JSON.parse(w.dataset.rhnNumbers);
    const play = w.querySelector('button[name=play]');
    if (numbers().playing) play.click();  // pause a run still going
    w.querySelector('button[name=reset]').click();
    play.click();
    const deadline = performance.now() + 300000;  // then the caller's checks fail
    while (numbers().steps < steps || numbers().playing) {
        await new Promise(r => setTimeout(r, 100));
        if (numbers().error || performance.now() > deadline) break;
    }
    return { numbers: numbers(), steps_per_s: Number(w.dataset.rhnStepsPerS) };
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
