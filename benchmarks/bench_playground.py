"""Training steps per second of the playground in Chromium.

Renders the playground (``rhn.widgets.playground_widget``) on the stand-alone
page of ``tests/browser/playground_page.py`` in headless Chromium (Debian's,
``/usr/bin/chromium``), presses play and reads the rate the widget measures
itself (``data-rhn-steps-per-s``: steps trained since play was pressed over
the wall time since, drawing included; one step trains both the RHN and the
RNN of matched size on the same batch). The setting of the issue: H = 16,
D = 2, T = 30, batch 16. The target is 30 steps/s.

    .venv/bin/python benchmarks/bench_playground.py [--steps 1000] [--repeats 3]

The machine's load average is printed with the numbers: on a shared machine
they are lower bounds of the rate.
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
sys.path.insert(0, str(ROOT))  # for tests.browser (the page, the server)

from playwright.sync_api import sync_playwright  # noqa: E402

from rhn.widgets.playground import playground_widget  # noqa: E402
from tests.browser.playground_page import PLAY_JS, playground_page  # noqa: E402
from tests.browser.server import serve  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--seq-len", type=int, default=30)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}  cpus: {os.cpu_count()}")
    fig = playground_widget(hidden_size=16, depth=args.depth, seq_len=args.seq_len)
    rates = []
    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(
            executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"]
        )
        playground_page(fig, Path(tmp))
        with serve(Path(tmp)) as url:
            page = browser.new_page()
            page.goto(url + "index.html")
            page.wait_for_selector(".rhn-playground-root[data-rhn-numbers]")
            root = page.locator("#root").element_handle()
            for _ in range(args.repeats):
                out = page.evaluate(PLAY_JS, [root, args.steps])
                rates.append(out["steps_per_s"])
                print(f"{args.steps} steps: {out['steps_per_s']:.1f} steps/s")
            page.close()
        browser.close()
    row = {
        "H": 16,
        "D": args.depth,
        "T": args.seq_len,
        "batch": fig.data["batch"],
        "rnn_hidden": fig.data["rnn"][args.depth - 1]["hidden_size"],
        "steps": args.steps,
        "steps_per_s": rates,
        "median": statistics.median(rates),
    }
    print(f"load average after: {os.getloadavg()}")
    print(json.dumps(row))


if __name__ == "__main__":
    main()
