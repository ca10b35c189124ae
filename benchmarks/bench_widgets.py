"""How long one slider move takes to redraw a live interactive figure.

Builds the three figures of the book in live mode and moves each control
through values it has not drawn before (so nothing is served from a cache,
as when a reader drags a slider to a new value), timing the whole redraw:
the model computation, matplotlib, PNG encoding and setting the image.
Also times building the static (website) version of each figure.

    .venv/bin/python benchmarks/bench_widgets.py [--repeats N]

The target is at most 100 ms per redraw on a 2-core CPU. The machine's load
average is printed with the numbers: on a shared machine they are upper bounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import torch

from rhn import widgets


def _moves(control: widgets.Control, n: int) -> list:
    """``n`` settings of one control, off the static grid where it is numeric."""
    if not control.numeric:
        return [v for _ in range(n) for v in control.values][:n]
    lo, hi = min(control.values), max(control.values)
    values = np.linspace(lo, hi, n + 2)[1:-1]
    if control.integer:
        return [int(round(v)) for v in values]
    return [round(float(v), 3) + 0.013 for v in values]  # not a grid value


def bench_live(name: str, fig: widgets.InteractiveFigure, repeats: int) -> list[float]:
    times = []
    for control in fig.controls:
        widget = fig.control_widgets[control.name]
        start = widget.value
        for value in _moves(control, repeats):
            if value == widget.value:
                continue
            t0 = time.perf_counter()
            widget.value = value  # observe -> redraw -> Image.value
            times.append(1000 * (time.perf_counter() - t0))
        widget.value = start
    print(
        f"{name:<15} live redraw: median {statistics.median(times):6.1f} ms, "
        f"max {max(times):6.1f} ms over {len(times)} moves"
    )
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=8, help="moves per control")
    args = parser.parse_args()
    torch.set_num_threads(1)  # one core, as a notebook kernel shares the machine
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    builders = {
        "rnn_discs": widgets.rnn_discs_widget,
        "rhn_jacobian": widgets.rhn_jacobian_widget,
        "gradient_flow": widgets.gradient_flow_widget,
    }
    everything = []
    for name, build in builders.items():
        t0 = time.perf_counter()
        fig = build(mode="live")
        first = 1000 * (time.perf_counter() - t0)
        print(f"{name:<15} live build (first draw): {first:7.1f} ms")
        everything += bench_live(name, fig, args.repeats)
    for name, build in builders.items():
        t0 = time.perf_counter()
        fig = build(mode="static")
        total = time.perf_counter() - t0
        size = sum(len(png) for png in fig.frames.values())
        print(
            f"{name:<15} static build: {len(fig.frames):4d} frames in {total:5.1f} s, "
            f"{size / 1024:7.1f} KiB of PNG ({size / len(fig.frames) / 1024:.1f} "
            "KiB per frame)"
        )
    print(
        f"all live redraws: median {statistics.median(everything):.1f} ms, "
        f"90th percentile {np.percentile(everything, 90):.1f} ms, "
        f"max {max(everything):.1f} ms"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
