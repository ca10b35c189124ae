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


# scrolls the page so that `name`'s slider lies at the top of what the reader
# sees ("top": just below the sticky head) or at the bottom of the screen
PLACE_SLIDER_JS = """([root, name, where]) => {
    const row = root.querySelector(`.rhn-control[data-name=${name}]`);
    const head = root.querySelector('.rhn-playground-head');
    // the top of the screen that nothing covers: below the site's sticky
    // bar (the head's `top`) and below the head, where it sticks
    const style = getComputedStyle(head);
    const bar = parseFloat(style.top) || 0;
    const stuck = style.position === 'sticky' ? head.offsetHeight : 0;
    const r = row.getBoundingClientRect();
    const target = where === 'top' ? bar + stuck + 4 : innerHeight - r.height - 4;
    window.scrollBy(0, r.top - target);
    return {wanted: target, got: row.getBoundingClientRect().top};
}"""

# where the loss chart and the slider `name` are, and whether each is the
# element at its own centre (nothing drawn over it)
IN_VIEW_JS = """([root, name]) => {
    const canvas = root.querySelector('.rhn-playground-head canvas');
    const slider = root.querySelector(`input[name=${name}]`);
    const fact = (el) => {
        const r = el.getBoundingClientRect();
        const x = r.left + r.width / 2, y = r.top + r.height / 2;
        const hit = document.elementFromPoint(x, y);
        return {top: r.top, bottom: r.bottom, on_top: hit === el};
    };
    return {canvas: fact(canvas), slider: fact(slider), height: innerHeight,
            focused: document.activeElement === slider};
}"""


def play_windows(page, root, seconds: float, good, tries: int = 2) -> list[dict]:  # noqa: ANN001
    """Measure windows of ``seconds`` of play of the playground ``root`` (a
    Locator, already playing, with ``OBSERVE_LONG_TASKS_JS`` observing): the
    training steps and the main thread's long tasks (ms, rounded) of each.
    A further window is measured while ``good(window)`` is false, up to
    ``tries`` in all: on a busy machine a stray task (a collection, another
    process) can land in one window, while training on the main thread would
    fill every window. Returns every window measured; the last is the one to
    judge."""
    windows = []
    for _ in range(tries):
        before = json.loads(root.get_attribute("data-rhn-numbers"))["steps"]
        page.evaluate("() => { window.rhnLongTasks = []; }")
        page.wait_for_timeout(1000 * seconds)
        long_tasks = [round(t) for t in page.evaluate("() => window.rhnLongTasks")]
        steps = json.loads(root.get_attribute("data-rhn-numbers"))["steps"] - before
        windows.append({"steps": steps, "long_tasks_ms": long_tasks})
        if good(windows[-1]):
            break
    return windows


def check_loss_in_view_while_sliding(page, root) -> list[dict]:  # noqa: ANN001
    """Move every slider of the playground in ``root`` (a Locator) with the keyboard,
    placed just below the sticky head and at the bottom of the screen; asserts
    that the loss chart is on screen, uncovered, and the slider too. Returns
    the facts measured."""
    handle = root.element_handle()
    names = root.evaluate(
        "(r) => [...r.querySelectorAll('input[type=range]')].map((s) => s.name)"
    )
    assert names, "no slider"
    facts = []
    for name in names:
        for where in ("top", "bottom"):
            placed = page.evaluate(PLACE_SLIDER_JS, [handle, name, where])
            # the page is long enough to get there
            assert abs(placed["got"] - placed["wanted"]) < 2, (name, where, placed)
            slider = root.locator(f"input[name={name}]")
            slider.focus()
            before = slider.input_value()
            page.keyboard.press("ArrowLeft" if where == "top" else "ArrowRight")
            f = page.evaluate(IN_VIEW_JS, [handle, name])
            f.update(name=name, where=where, moved=slider.input_value() != before)
            facts.append(f)
            c, s = f["canvas"], f["slider"]
            assert f["focused"] and f["moved"], f
            assert 0 <= c["top"] and c["bottom"] <= f["height"] and c["on_top"], f
            assert 0 <= s["top"] and s["bottom"] <= f["height"] and s["on_top"], f
    return facts
