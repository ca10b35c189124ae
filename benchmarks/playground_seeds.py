"""The runs behind chapter 14's claim, with the playground's own numerics.

Trains the playground (``rhn/widgets/js/playground_numerics.js``, the code
the browser runs, under Node.js: the same V8 engine as Chromium) at the
settings chapter 14 names, for several seeds (weights seed ``s`` from
:func:`rhn.widgets.playground.playground_data`, data seed ``s + 1``), and
writes every 100 steps each net's mean loss over the last 100 steps and its
gradient ratio (``ratio_*``: in the last batch, the norm of dL/ds at the
first micro-layer of step 0 over the one at the first micro-layer of step
T - 1), with the machine, to ``rhn/_data/results/playground_seeds.json`` (read by
:func:`rhn.results.load`).

    .venv/bin/python benchmarks/playground_seeds.py [--seeds 0 1 2 3 4 5 6 7]
        [--settings NAME ...]

Settings already in the record are kept: naming one of them again is refused
(a record only grows), so a new setting is added with ``--settings NAME``.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rhn.widgets.playground import playground_data  # noqa: E402

OUT = ROOT / "rhn" / "_data" / "results" / "playground_seeds.json"
SETTINGS = {
    # the page's first starting setting, the paper's Penn Treebank bias -2
    "start": {
        "depth": 2,
        "transform_bias": -2.0,
        "seq_len": 30,
        "lr": 0.01,
        "steps": 1000,
    },
    # the page's starting setting since the playground starts from the
    # package's default transform bias, -3 (rhn.defaults.TRANSFORM_BIAS)
    "default_bias": {
        "depth": 2,
        "transform_bias": -3.0,
        "seq_len": 30,
        "lr": 0.01,
        "steps": 1000,
    },
    # a deep RHN whose gates start open (b_T = +2)
    "open_gates": {
        "depth": 5,
        "transform_bias": 2.0,
        "seq_len": 30,
        "lr": 0.01,
        "steps": 1000,
    },
}
WINDOW = 100


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(8)))
    parser.add_argument(
        "--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS)
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None:
        sys.exit("node is not installed")
    version = subprocess.run([node, "--version"], capture_output=True, text=True)
    record = {
        "what": "playground runs (rhn/widgets/js/playground_numerics.js under node)",
        "window": WINDOW,
        "node": version.stdout.strip(),
        "cpu": _cpu(),
        "dtype": "float64",
        "settings": {name: SETTINGS[name] for name in args.settings},
        "runs": [],
    }
    if args.out.exists():  # keep what is recorded; add only new settings
        old = json.loads(args.out.read_text())
        again = sorted(set(args.settings) & set(old["settings"]))
        if again:
            sys.exit(
                f"--settings: {', '.join(again)} already in {args.out}; "
                "a record only grows"
            )
        record["settings"] = {**old["settings"], **record["settings"]}
        record["runs"] = old["runs"]
        record["node"], record["cpu"] = old["node"], old["cpu"]  # of the first runs
    for name in args.settings:
        for seed in args.seeds:
            data = playground_data(seed=seed, data_seed=seed + 1)
            request = {
                "op": "runs",
                "data": data,
                "settings": [SETTINGS[name]],
                "window": WINDOW,
                "every": 100,
            }
            proc = subprocess.run(
                [node, str(ROOT / "tests" / "playground_numerics.mjs")],
                input=json.dumps(request),
                capture_output=True,
                text=True,
                check=True,
            )
            (run,) = json.loads(proc.stdout)
            row = {
                "setting": name,
                "seed": seed,
                "data_seed": seed + 1,
                "node": version.stdout.strip(),
                "cpu": _cpu(),
                "trace": [
                    {"step": s, "rhn": a, "rnn": b, "ratio_rhn": c, "ratio_rnn": d}
                    for s, a, b, c, d in run["trace"]
                ],
            }
            record["runs"].append(row)
            last = row["trace"][-1]
            print(f"{name} seed {seed}: rhn {last['rhn']:.4f} rnn {last['rnn']:.4f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(args.out)  # a reader never sees a half-written file
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
