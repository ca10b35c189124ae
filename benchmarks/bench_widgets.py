"""How long the browser takes to redraw an interactive figure after a slider move.

Renders each figure of the book (``rhn.widgets``) on a stand-alone page in
headless Chromium (Debian's, ``/usr/bin/chromium``; the page is the one of
``tests/browser/harness.py``), moves every slider through ``--moves`` values
it has not drawn before, one per animation frame, and reads the time of each
redraw that the widget measures itself (``data-rhn-redraw-ms``: the numerics
and the update of the SVG; the browser's own layout and paint come on top).
The target is one animation frame, about 16 ms, for H up to 32.

    .venv/bin/python benchmarks/bench_widgets.py [--sizes 12 32] [--moves 100]

The machine's load average is printed with the numbers: on a shared machine
they are upper bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.browser (the harness page, the server)

from playwright.sync_api import sync_playwright  # noqa: E402

from rhn import widgets  # noqa: E402
from tests.browser.harness import harness_page  # noqa: E402
from tests.browser.server import serve  # noqa: E402

FIGURES = {
    "rnn_discs": widgets.rnn_discs_widget,
    "rhn_jacobian": widgets.rhn_jacobian_widget,
    "gradient_flow": widgets.gradient_flow_widget,
}

# moves every slider of the page through n values, one per animation frame,
# and returns the redraw times the widget measured
MOVE_JS = """async (n) => {
    const root = document.querySelector('.rhn-widget');
    const frame = () => new Promise(r => requestAnimationFrame(() => r()));
    const times = [];
    for (const input of document.querySelectorAll('input[type=range]')) {
        const lo = Number(input.min), hi = Number(input.max);
        for (let i = 0; i < n; i++) {
            // golden-ratio steps: spread over the range, never the same value
            input.value = String(lo + ((i * 0.6180339887 + 0.1) % 1) * (hi - lo));
            input.dispatchEvent(new Event('input', {bubbles: true}));
            await frame();
            times.push(Number(root.dataset.rhnRedrawMs));
        }
    }
    return times;
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[12, 32])
    parser.add_argument("--moves", type=int, default=100)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    results = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"]
        )
        for H in args.sizes:
            for name, build in FIGURES.items():
                with tempfile.TemporaryDirectory() as tmp:
                    harness_page(build(hidden_size=H), Path(tmp))
                    with serve(Path(tmp)) as url:
                        page = browser.new_page()
                        page.goto(url + "index.html")
                        page.wait_for_selector(".rhn-widget[data-rhn-numbers]")
                        times = page.evaluate(MOVE_JS, args.moves)
                        page.close()
                times.sort()
                row = {
                    "figure": name,
                    "H": H,
                    "moves": len(times),
                    "median_ms": statistics.median(times),
                    "p90_ms": times[int(0.9 * (len(times) - 1))],
                    "max_ms": times[-1],
                }
                results.append(row)
                print(
                    f"{name:14s} H={H:3d}  median {row['median_ms']:6.2f} ms  "
                    f"p90 {row['p90_ms']:6.2f} ms  max {row['max_ms']:6.2f} ms  "
                    f"({row['moves']} moves)"
                )
        browser.close()
    print(f"load average after: {os.getloadavg()}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
