"""Time the analytic RHN temporal Jacobian, its Geršgorin discs and eigenvalues.

Sliders in the book redraw from these, so one evaluation for H = 64, depth 5
should take well under 50 ms on a 2-core CPU. Run:

    python benchmarks/bench_jacobian.py

Prints the median of repeated runs (milliseconds) for each part, for the
autograd reference for comparison, and for one redraw of the disc plot.
"""

from __future__ import annotations

import os
import statistics
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

import rhn  # noqa: E402
from rhn import analysis, plots  # noqa: E402


def median_ms(fn, repeats: int = 30) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def bench(dtype: torch.dtype, H: int = 64, D: int = 5, I: int = 8) -> None:
    cell = rhn.RHNCell(I, H, D).to(dtype)
    x, s = torch.randn(I, dtype=dtype), torch.randn(H, dtype=dtype).tanh()
    J = analysis.temporal_jacobian(cell, x, s).detach()

    def everything() -> None:
        with torch.no_grad():
            J = analysis.temporal_jacobian(cell, x, s)
            analysis.gershgorin_discs(J)
            analysis.eigenvalues(J)

    def jacobian() -> None:
        with torch.no_grad():
            analysis.temporal_jacobian(cell, x, s)

    rows = {
        "analytic Jacobian": jacobian,
        "Geršgorin discs": lambda: analysis.gershgorin_discs(J),
        "eigenvalues": lambda: analysis.eigenvalues(J),
        "Jacobian + discs + eigenvalues": everything,
        "autograd reference (torch.func)": (
            lambda: analysis.temporal_jacobian_autograd(cell, x, s)
        ),
    }
    for name, fn in rows.items():
        print(f"{str(dtype):>14}  {name:<32} {median_ms(fn):8.2f} ms")


def main() -> None:
    torch.manual_seed(0)
    if hasattr(os, "getloadavg"):  # timings on a shared machine depend on it
        print(
            "load average (1, 5, 15 min): "
            + ", ".join(f"{v:.2f}" for v in os.getloadavg())
        )
    # small matrices: one thread avoids the cost of waking a second one, which
    # on a busy 2-core machine can dominate (tens of ms per call)
    for threads in sorted({1, torch.get_num_threads()}):
        torch.set_num_threads(threads)
        print(f"threads: {threads}, H = 64, depth = 5 (median of 30 runs)")
        for dtype in (torch.float64, torch.float32):
            bench(dtype)
    cell = rhn.RHNCell(8, 64, 5).double()
    J = analysis.temporal_jacobian(
        cell, torch.randn(8, dtype=torch.float64), torch.zeros(64, dtype=torch.float64)
    ).detach()
    fig, ax = plt.subplots(figsize=(4.2, 4.2))

    def redraw() -> None:
        ax.clear()
        plots.plot_spectrum(J, ax=ax, view=2.0)
        fig.canvas.draw()

    print(f"{'':>14}  {'plot_spectrum + canvas draw':<32} {median_ms(redraw):8.2f} ms")


if __name__ == "__main__":
    main()
