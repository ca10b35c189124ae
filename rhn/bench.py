r"""``python -m rhn bench``: time the RHN loops against ``torch.nn`` recurrences.

Times one forward and backward pass (``output.sum().backward()``) of

- ``rhn-loop``: :class:`rhn.RHN` with ``impl="loop"``, the plain per-step loop;
- ``rhn-fast``: :class:`rhn.RHN` with ``impl="fast"`` (:mod:`rhn.fast`);
- ``rhn-triton`` (CUDA, needs Triton): ``impl="triton"``, one Triton kernel
  per layer for the whole sequence, forward and backward (:mod:`rhn.fused`;
  what ``impl="auto"`` runs on GPUs of compute capability 8.0 or newer);
- ``rhn-graphed`` (CUDA): ``impl="fast"`` with the whole forward and backward
  captured once as a CUDA graph and replayed
  (:func:`rhn.graphs.capture_forward_backward`);
- ``lstm`` / ``gru``: ``torch.nn.LSTM`` / ``torch.nn.GRU`` (cuDNN on CUDA,
  oneDNN or ATen kernels on CPU) with the RHN's hidden size ``H``;
- ``lstm-matched`` / ``gru-matched``: the same at the hidden size that gives
  the RHN's parameter count (:func:`rhn.matched_hidden_size`).

Runs are *interleaved* (one run of each model in turn, ``repeats`` rounds after
``warmup`` rounds), so that a change in machine load hits every model alike;
the table reports medians, and CUDA is synchronised around every run. Both
wall-clock time and process CPU time are recorded: on a shared machine the CPU
time is the steadier of the two. The JSON written holds the device name, the
torch version, the thread count, the load average before and after, every
median and the ratios.

Nothing is compiled: the fast path is plain PyTorch, so there is no compile
step to report (``compile_s`` is empty) unless ``--compile`` adds
``rhn-compiled``, the plain loop with each cell's ``step`` wrapped in
:func:`torch.compile`, whose first-call times (and first call at a second
sequence length, to show recompilation) are reported separately.

On CUDA the default models are :data:`CUDA_MODELS` (the CPU ones plus
``rhn-triton``, when Triton is installed, and ``rhn-graphed``); the JSON
records the GPU's name.

Example::

    python -m rhn bench --batch 1 32 128 --repeats 20 --threads 1 \
        --out rhn/_data/results/results-cpu.json
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import os
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from . import _checks, _cli, _io, devices
from .baselines import count_parameters, matched_hidden_size
from .cells import RHN

__all__ = [
    "MODELS",
    "PRECISIONS",
    "CUDA_MODELS",
    "KNOWN",
    "default_models",
    "check_models",
    "device_name",
    "build",
    "time_models",
    "run",
    "depth_sweep",
    "format_table",
    "main",
]

MODELS = ("rhn-loop", "rhn-fast", "lstm", "lstm-matched", "gru", "gru-matched")
"""The models :func:`run` times by default on the CPU, in table order."""

CUDA_MODELS = (
    "rhn-loop",
    "rhn-fast",
    "rhn-triton",
    "rhn-graphed",
    "lstm",
    "lstm-matched",
    "gru",
    "gru-matched",
)
"""The models :func:`run` times by default on CUDA (``rhn-triton`` only when
Triton is installed and the GPU has compute capability 8.0+)."""

KNOWN = (*CUDA_MODELS, "rhn-compiled")
"""Every model name :func:`run` accepts."""


def default_models(device: torch.device) -> tuple[str, ...]:
    """The models timed by default on ``device``."""
    if device.type != "cuda":
        return MODELS
    if importlib.util.find_spec("triton") is None or _triton_problem(device):
        return tuple(m for m in CUDA_MODELS if m != "rhn-triton")
    return CUDA_MODELS


def _triton_problem(device: torch.device) -> str | None:
    # the GPU's capability, once there is a GPU to ask (names are checked first)
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    return devices.triton_problem(device)


def device_name(device: torch.device) -> str:
    """A readable name of ``device``: the GPU's name, or the CPU's model name."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    from .studies import cpu_model

    return cpu_model()


def check_models(models: Sequence[str], device: torch.device) -> list[str]:
    """The model names, checked: known, at least one, runnable on ``device``.

    Raises:
        ValueError: for an unknown name, an empty list, ``rhn-triton`` or
            ``rhn-graphed`` off CUDA, or ``rhn-triton`` without Triton or on a
            GPU older than compute capability 8.0.
    """
    models = [_checks.choice("models", m, KNOWN) for m in models]
    if not models:
        raise ValueError("models must name at least one model, got none")
    cuda_only = [m for m in models if m in ("rhn-triton", "rhn-graphed")]
    if cuda_only and device.type != "cuda":
        raise ValueError(
            f"models {cuda_only} run on CUDA only, got device {device.type!r}"
        )
    if "rhn-triton" in models and importlib.util.find_spec("triton") is None:
        raise ValueError(
            "models: rhn-triton needs the optional package triton, which is not "
            "installed (pip install 'rhn[triton]')"
        )
    if "rhn-triton" in models and _triton_problem(device):
        raise ValueError(f"models: rhn-triton: {_triton_problem(device)}")
    return models


def build(
    name: str, input_size: int, hidden_size: int, depth: int, device: torch.device
) -> nn.Module:
    """One benchmark model by name (see :data:`MODELS` and ``rhn-compiled``)."""
    if name.startswith("rhn"):
        impl = {"rhn-fast": "fast", "rhn-triton": "triton", "rhn-graphed": "fast"}
        impl = impl.get(name, "loop")
        model = RHN(input_size, hidden_size, depth, impl=impl, device=device)
        if name == "rhn-compiled":
            for cell in model.cells:
                cell.step = torch.compile(cell.step, dynamic=False)
        return model
    base, _, matched = name.partition("-")
    module = {"lstm": nn.LSTM, "gru": nn.GRU}[base]
    if matched:
        target = count_parameters(RHN(input_size, hidden_size, depth, device="meta"))
        hidden_size = matched_hidden_size(base, input_size, target)
    return module(input_size, hidden_size, device=device)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _step(model: nn.Module, x: torch.Tensor) -> None:
    """One forward and backward pass; gradients are dropped first."""
    model.zero_grad(set_to_none=True)
    output = model(x)[0]
    output.sum().backward()


def _step_fn(name: str, model: nn.Module, x: torch.Tensor) -> Callable[[], None]:
    """The timed call of one model: a forward and backward pass on ``x``.

    ``rhn-graphed`` captures the pass as a CUDA graph on its first call (so
    its ``first_s`` includes warm-up and capture) and replays it after.
    """
    if name != "rhn-graphed":
        return lambda: _step(model, x)
    replay: list[Callable[[], None]] = []

    def graphed() -> None:
        if not replay:
            from .graphs import capture_forward_backward

            replay.append(capture_forward_backward(model, x))
        replay[0]()

    return graphed


def _timed(fn: Callable[[], None], device: torch.device) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one call of ``fn``."""
    _sync(device)
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    _sync(device)
    return time.perf_counter() - wall, time.process_time() - cpu


def time_models(
    models: dict[str, nn.Module],
    x: torch.Tensor,
    repeats: int,
    warmup: int = 2,
) -> dict[str, dict[str, Any]]:
    """Interleaved timings of a forward and backward pass of each model on ``x``.

    Args:
        models: name -> model; each returns ``(output, state)``.
        x: the input ``(T, B, I)``.
        repeats: timed rounds; each round runs every model once, in an order
            rotated from round to round.
        warmup: untimed rounds first (default 2). The first call of each model
            is timed separately as ``first_s`` (it includes any compilation).

    Returns:
        name -> ``{"median_ms", "q1_ms", "q3_ms", "cpu_median_ms", "first_s",
        "runs"}``.
    """
    repeats = _checks.positive_int("repeats", repeats)
    warmup = _checks.positive_int("warmup", warmup, minimum=0)
    device = x.device
    names = list(models)
    steps = {name: _step_fn(name, models[name], x) for name in names}
    first = {}
    for name in names:
        first[name] = _timed(steps[name], device)[0]
    for _ in range(max(0, warmup - 1)):
        for name in names:
            steps[name]()
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            w, c = _timed(steps[name], device)
            wall[name].append(w)
            cpu[name].append(c)
    out = {}
    for name in names:
        q1, _, q3 = statistics.quantiles(wall[name], n=4) if repeats > 1 else [0] * 3
        out[name] = {
            "median_ms": 1e3 * statistics.median(wall[name]),
            "q1_ms": 1e3 * q1,
            "q3_ms": 1e3 * q3,
            "cpu_median_ms": 1e3 * statistics.median(cpu[name]),
            "first_s": first[name],
            "runs": repeats,
        }
    return out


def _hidden(model: nn.Module) -> int:
    return int(model.hidden_size)


def run(
    batch_sizes: Sequence[int] = (1, 32, 128),
    *,
    steps: int = 100,
    input_size: int = 64,
    hidden_size: int = 256,
    depth: int = 5,
    repeats: int = 20,
    warmup: int = 2,
    models: Sequence[str] | None = None,
    device: str | torch.device = "cpu",
    seed: int = 0,
    precision: str = "float32",
) -> dict[str, Any]:
    """Run the benchmark and return the results as a JSON-ready dict.

    Args:
        batch_sizes: the batch sizes ``B`` to time (default ``(1, 32, 128)``).
        steps: sequence length ``T`` (default 100).
        input_size, hidden_size, depth: ``I`` (64), ``H`` (256) and ``D`` (5)
            of the RHN; the LSTM/GRU baselines use ``H`` or the matched size.
        repeats: timed rounds per batch size (default 20).
        warmup: untimed rounds first (default 2).
        models: names from :data:`KNOWN`; default :func:`default_models`
            of the device. ``rhn-triton`` and ``rhn-graphed`` need CUDA.
        device: ``"cpu"``, ``"cuda"`` or a :class:`torch.device`.
        seed: seed for the weights and inputs (default 0).
        precision: the matrix products of every model: ``"float32"``
            (default: torch's defaults, IEEE float32 products, while cuDNN's
            recurrent layers use TF32 where the GPU has it), ``"tf32"``
            (TF32 for every float32 product, as
            ``torch.set_float32_matmul_precision("high")``) or ``"bfloat16"``
            (every model under bfloat16 ``torch.autocast``). See
            :data:`PRECISIONS`.

    Returns:
        A dict with ``meta`` (device, torch version, threads, load average,
        sizes), ``params`` and ``hidden`` per model, ``results`` (a list of one
        row per batch size and model), ``ratios`` per batch size and
        ``compile_s``.
    """
    device = torch.device(device)
    models = check_models(default_models(device) if models is None else models, device)
    precision = _checks.choice("precision", precision, list(PRECISIONS))
    load_before = _loadavg()
    torch.manual_seed(seed)
    built = {m: build(m, input_size, hidden_size, depth, device) for m in models}
    rows, ratios, compile_s = [], {}, {}
    for B in batch_sizes:
        B = _checks.positive_int("batch_sizes", B)
        x = torch.randn(steps, B, input_size, device=device)
        with _precision(precision, device):
            timings = time_models(built, x, repeats, warmup)
        for name, t in timings.items():
            rows.append({"batch": B, "model": name, **t})
        ratios[str(B)] = _ratios({n: t["median_ms"] for n, t in timings.items()})
        if "rhn-compiled" in built and str(B) not in compile_s:
            # a second sequence length: does the compiled step recompile?
            x2 = torch.randn(steps + 7, B, input_size, device=device)
            compile_s[str(B)] = {
                "first_call_s": timings["rhn-compiled"]["first_s"],
                "new_length_first_call_s": _timed(
                    lambda x2=x2: _step(built["rhn-compiled"], x2), device
                )[0],
            }
    return {
        "meta": {
            "device": device_name(device),
            "device_type": device.type,
            "torch": torch.__version__,
            "triton": _triton_version(),
            # what runs inside the graph
            "graphed_impl": "fast" if "rhn-graphed" in built else None,
            "threads": torch.get_num_threads(),
            "loadavg_before": load_before,
            "loadavg_after": _loadavg(),
            "cpu_count": os.cpu_count(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"
            ),
            "T": steps,
            "I": input_size,
            "H": hidden_size,
            "D": depth,
            "repeats": repeats,
            "warmup": warmup,
            "timing": "forward + backward of output.sum(), interleaved, medians",
            "precision": precision,
        },
        "params": {name: count_parameters(m) for name, m in built.items()},
        "hidden": {name: _hidden(m) for name, m in built.items()},
        "results": rows,
        "ratios": ratios,
        "compile_s": compile_s,
    }


PRECISIONS = {
    "float32": "torch's defaults: IEEE float32 products (cuDNN's RNNs use TF32)",
    "tf32": "TF32 tensor cores for every float32 product",
    "bfloat16": "bfloat16 autocast for every model",
}
"""The values of ``precision`` (``--precision``), with what each means."""


@contextlib.contextmanager
def _precision(precision: str, device: torch.device) -> Iterator[None]:
    """Run the timings at ``precision``; torch's settings are restored after."""
    before = (torch.get_float32_matmul_precision(), torch.backends.cudnn.allow_tf32)
    try:
        if precision == "tf32":
            torch.set_float32_matmul_precision("high")
            torch.backends.cudnn.allow_tf32 = True
        if precision == "bfloat16":
            with torch.autocast(device.type, dtype=torch.bfloat16):
                yield
        else:
            yield
    finally:
        torch.set_float32_matmul_precision(before[0])
        torch.backends.cudnn.allow_tf32 = before[1]


def _triton_version() -> str | None:
    if importlib.util.find_spec("triton") is None:
        return None
    import triton

    return str(triton.__version__)


def _loadavg() -> list[float] | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:  # not available on every platform
        return None


def _ratios(median: dict[str, float]) -> dict[str, float]:
    """Speed-ups of each fast variant over the loop and its cost against baselines.

    Keys ``loop/<v>`` (how many times faster than the loop) and ``<v>/<base>``
    (time relative to a baseline) for ``v`` in ``fast``, ``triton``,
    ``graphed``; ``fast/triton`` and ``fast/graphed`` compare the variants.
    """
    out = {}
    bases = ("lstm", "lstm-matched", "gru", "gru-matched", "rhn-compiled")
    for variant in ("rhn-fast", "rhn-triton", "rhn-graphed"):
        v = median.get(variant)
        if v is None:
            continue
        short = variant.removeprefix("rhn-")
        if "rhn-loop" in median:
            out[f"loop/{short}"] = median["rhn-loop"] / v
        if variant != "rhn-fast" and "rhn-fast" in median:
            out[f"fast/{short}"] = median["rhn-fast"] / v
        for base in bases:
            if base in median:
                out[f"{short}/{base}"] = v / median[base]
    return out


def depth_sweep(
    depths: Sequence[int] = (1, 2, 3, 5, 8),
    *,
    batch_size: int = 32,
    steps: int = 100,
    input_size: int = 64,
    hidden_size: int = 256,
    repeats: int = 10,
    warmup: int = 1,
    models: Sequence[str] = ("rhn-loop", "rhn-fast"),
    device: str | torch.device = "cpu",
) -> list[dict[str, Any]]:
    """Time per token (``T*B`` of them) of forward and backward as depth grows.

    Returns one row per depth and model with ``median_ms`` and
    ``us_per_token``.
    """
    device = torch.device(device)
    x = torch.randn(steps, batch_size, input_size, device=device)
    rows = []
    for D in depths:
        D = _checks.positive_int("depths", D)
        built = {m: build(m, input_size, hidden_size, D, device) for m in models}
        for name, t in time_models(built, x, repeats, warmup).items():
            per_token = 1e3 * t["median_ms"] / (steps * batch_size)
            rows.append({"depth": D, "model": name, **t, "us_per_token": per_token})
    return rows


def format_table(result: dict[str, Any]) -> str:
    """The benchmark as a plain-text table: medians (ms) and ratios per batch."""
    models = list(dict.fromkeys(r["model"] for r in result["results"]))
    hidden = result.get("hidden", {})
    head = f"{'B':>4} " + " ".join(f"{m:>13}" for m in models)
    sub = f"{'':>4} " + " ".join(f"{'H=' + str(hidden.get(m, '')):>13}" for m in models)
    lines = [head, sub]
    for B in dict.fromkeys(r["batch"] for r in result["results"]):
        med = {r["model"]: r["median_ms"] for r in result["results"] if r["batch"] == B}
        lines.append(f"{B:>4} " + " ".join(f"{med[m]:>10.1f} ms" for m in models))
    lines.append("")
    for B, ratios in result["ratios"].items():
        text = ", ".join(f"{k} = {v:.2f}" for k, v in ratios.items())
        lines.append(f"B = {B}: {text}")
    meta = result["meta"]
    lines.append(
        f"{meta['device']}, torch {meta['torch']}, {meta['threads']} thread(s), "
        f"load average {meta['loadavg_before']} -> {meta['loadavg_after']}"
    )
    for B, c in result.get("compile_s", {}).items():
        lines.append(
            f"compile (B = {B}): first call {c['first_call_s']:.1f} s, first call "
            f"at a new length {c['new_length_first_call_s']:.1f} s"
        )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = _cli.Parser(
        prog="python -m rhn bench",
        description="Time forward+backward of the RHN (plain loop and fast path) "
        "against torch.nn.LSTM/GRU at the same hidden size and at the same "
        "parameter count. Prints a table and writes JSON.",
    )
    p.add_argument("--batch", type=int, nargs="+", default=[1, 32, 128], help="B")
    p.add_argument("--steps", type=int, default=100, help="T (default 100)")
    p.add_argument("--input-size", type=int, default=64, help="I (default 64)")
    p.add_argument("--hidden-size", type=int, default=256, help="H (default 256)")
    p.add_argument("--depth", type=int, default=5, help="D (default 5)")
    p.add_argument("--repeats", type=int, default=20, help="timed rounds (20)")
    p.add_argument("--warmup", type=int, default=2, help="untimed rounds (2)")
    p.add_argument(
        "--models",
        nargs="+",
        default=None,
        type=str.lower,
        choices=list(KNOWN),
        help="models to time (default: all but rhn-compiled; rhn-triton and "
        "rhn-graphed on CUDA only)",
    )
    p.add_argument(
        "--compile", action="store_true", help="also time rhn-compiled (slow start)"
    )
    p.add_argument(
        "--depths",
        type=int,
        nargs="*",
        default=[],
        help="also time cost per token at these depths (B = the largest --batch "
        "that is at most 32)",
    )
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (default cpu)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--precision",
        default="float32",
        type=str.lower,
        choices=list(PRECISIONS),
        help="matrix products of every model: float32 (default: torch's "
        "defaults), tf32 or bfloat16 (autocast)",
    )
    p.add_argument(
        "--out",
        default=None,
        help="JSON file to write (default: results-<device type>.json in the "
        "current directory); '-' to write none",
    )
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing --out file (refused by default: it holds the "
        "numbers of an earlier run)",
    )
    return p


def _check_args(args: argparse.Namespace) -> tuple[str, str | None]:
    """Validate the parsed options; return the device and the output file.

    The output file (``None`` for ``--out -``) is checked for writing here, so
    that a bad path fails before the minutes of timing, not after.
    """
    for b in args.batch:
        _checks.positive_int("--batch", b)
    for name in ("steps", "input_size", "hidden_size", "depth", "repeats"):
        _checks.positive_int(f"--{name.replace('_', '-')}", getattr(args, name))
    _checks.positive_int("--warmup", args.warmup, minimum=0)
    for d in args.depths:
        _checks.positive_int("--depths", d)
    if args.threads is not None:
        _checks.positive_int("--threads", args.threads)
        if args.threads > 4096:  # torch takes a C int
            raise ValueError(f"--threads must be at most 4096, got {args.threads}")
    _checks.seed("--seed", args.seed)
    device = args.device.strip().lower()
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    kind = _checks.device("--device", device).type
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {args.device}: no CUDA device is available")
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"--device must be cpu, cuda, cuda:N or auto, got {device!r}")
    out = args.out or f"results-{kind}.json"
    if out == "-":
        return device, None
    _cli.writable_file("--out", out)
    from .train.records import check_record_out

    check_record_out(out, args.overwrite, kind="bench", name="--out")
    if Path(out).exists() and not args.overwrite:
        raise ValueError(
            f"--out {out!r} already exists; pass --overwrite to replace it, or "
            "another --out"
        )
    return device, out


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m rhn bench``; returns the exit status.

    Every option is checked before any timing: a mistake is one line on
    stderr and exit status 2.
    """
    args = _parser().parse_args(argv)
    try:
        device, out = _check_args(args)
        models = list(args.models or default_models(torch.device(device)))
        if args.compile and "rhn-compiled" not in models:
            models.append("rhn-compiled")
        check_models(models, torch.device(device))
    except (TypeError, ValueError) as err:
        return _cli.fail("python -m rhn bench", err)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    result = run(
        args.batch,
        steps=args.steps,
        input_size=args.input_size,
        hidden_size=args.hidden_size,
        depth=args.depth,
        repeats=args.repeats,
        warmup=args.warmup,
        models=models,
        device=device,
        seed=args.seed,
        precision=args.precision,
    )
    if args.depths:
        small = [b for b in args.batch if b <= 32] or [min(args.batch)]
        result["depth_sweep"] = depth_sweep(
            args.depths,
            batch_size=max(small),
            steps=args.steps,
            input_size=args.input_size,
            hidden_size=args.hidden_size,
            repeats=max(3, args.repeats // 2),
            device=device,
        )
        result["meta"]["loadavg_after"] = _loadavg()
    print(format_table(result))
    for row in result.get("depth_sweep", []):
        print(
            f"D = {row['depth']:>2} {row['model']:>9}: {row['median_ms']:8.1f} ms, "
            f"{row['us_per_token']:6.2f} us/token"
        )
    if out is not None:
        _io.write_record(out, result, name="--out", indent=1)  # strict JSON
        print(f"wrote {out}")
    return 0
