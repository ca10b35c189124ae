"""The whole-sequence Triton kernel (rhn.fused) on a GPU: correctness and speed.

    PYTHONPATH=. python benchmarks/gpu_kernel.py check OUT.json
    PYTHONPATH=. python benchmarks/gpu_kernel.py time OUT.json
    PYTHONPATH=. python benchmarks/gpu_kernel.py sweep OUT.json

``check`` compares the kernel with the plain loop in float64 (outputs, final
states and every gradient) at the benchmark size and at odd sizes, then in
float32 (IEEE and TF32) and under bfloat16 autocast, and prints the largest
relative error of each. ``time`` times forward, backward and both at
B = 1, 32, 128 (T = 100, I = 64, H = 256, D = 5) for the kernel in bfloat16,
TF32 and IEEE float32, the fast path, and cuDNN's LSTM at the RHN's
parameter count, eager and in a CUDA graph. ``sweep`` times launch
configurations of the kernel at B = 32. Each writes a JSON record naming the
GPU, torch, Triton and cuDNN.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import time

import torch

import rhn
from rhn import bench, fused

DEV = torch.device("cuda")
T, I, H, D = 100, 64, 256, 5


def sync() -> None:
    torch.cuda.synchronize()


def env() -> dict:
    import triton

    return {
        "gpu": torch.cuda.get_device_name(),
        "capability": list(torch.cuda.get_device_capability()),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "triton": triton.__version__,
        "T": T,
        "I": I,
        "H": H,
        "D": D,
    }


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.detach().double(), b.detach().double()
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


def run(model, x, s0, amp=None, masks=None):
    ctx = torch.autocast("cuda", dtype=amp) if amp else contextlib.nullcontext()
    if masks is not None:  # the same masks for every model, in its dtype
        dt = next(model.parameters()).dtype
        cast = lambda m: None if m is None else m.to(dt)  # noqa: E731
        masks = rhn.DropoutMasks(
            tuple(map(cast, masks.input)),
            tuple(map(cast, masks.state)),
            cast(masks.output),
        )
    with ctx:
        out, fin = model(x, s0, masks=masks)
    loss = out.float().pow(2).sum() + fin.float().sum()
    grads = torch.autograd.grad(loss, [x, s0, *model.parameters()])
    return [out, fin, *grads]


def check(path: str) -> None:
    res = {"env": env(), "cases": {}}
    cases = [
        ("full size coupled", {"depth": D}, 32, H, T),
        ("odd: B 37, H 200, uncoupled, dropout, 2 layers", {"depth": 3,
         "coupled": False, "num_layers": 2, "state_dropout": 0.25}, 37, 200, 30),
        ("D 1, B 1, H 48", {"depth": 1}, 1, 48, 40),
    ]  # fmt: skip
    for name, kw, B, Hc, Tc in cases:
        torch.manual_seed(0)
        loop = rhn.RHN(I, Hc, impl="loop", device=DEV, dtype=torch.float64, **kw)
        tri = rhn.RHN(I, Hc, impl="triton", device=DEV, dtype=torch.float64, **kw)
        tri.load_state_dict(loop.state_dict())
        loop.train(), tri.train()
        N = kw.get("num_layers", 1)
        x = torch.randn(Tc, B, I, device=DEV, dtype=torch.float64, requires_grad=True)
        s0 = torch.randn(N, B, Hc, device=DEV, dtype=torch.float64, requires_grad=True)
        masks = loop.dropout_masks(B)
        want = run(loop, x, s0, masks=masks)
        got = run(tri, x, s0, masks=masks)
        out = {"float64": max(rel(a, b) for a, b in zip(got, want, strict=True))}
        tri32 = tri.float()
        x32 = x.detach().float().requires_grad_()
        s32 = s0.detach().float().requires_grad_()
        for prec in ("highest", "high"):
            torch.set_float32_matmul_precision(prec)
            got = run(tri32, x32, s32, masks=masks)
            errs = [rel(a, b) for a, b in zip(got, want, strict=True)]
            out[f"float32 {prec}"] = max(errs)
        torch.set_float32_matmul_precision("highest")
        got = run(tri32, x32, s32, amp=torch.bfloat16, masks=masks)
        out["bf16 autocast"] = max(rel(a, b) for a, b in zip(got, want, strict=True))
        errs = [rel(a, b) for a, b in zip(got, want, strict=True)]
        out["bf16 autocast per tensor"] = errs
        res["cases"][name] = out
        print(name, {k: v for k, v in out.items() if "per" not in k}, flush=True)
    json.dump(res, open(path, "w"), indent=1)


def median_ms(fn, n=20, warm=3) -> float:
    for _ in range(warm):
        fn()
    sync()
    walls = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        sync()
        walls.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(walls)


def passes(model, x, amp):
    ctx = (lambda: torch.autocast("cuda", dtype=amp)) if amp else contextlib.nullcontext

    def fwd():
        with ctx():
            return model(x)[0]

    def total():
        model.zero_grad(set_to_none=True)
        fwd().float().sum().backward()

    def infer():
        with torch.no_grad():
            fwd()

    return fwd, total, infer


def graphed(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def time_variants(B: int, variants: dict, res: dict, graph: bool = True) -> None:
    x = torch.randn(T, B, I, device=DEV)
    for name, (make, amp, prec) in variants.items():
        torch.set_float32_matmul_precision(prec)
        torch.backends.cudnn.allow_tf32 = prec != "highest"
        try:
            model = make()
            fwd, total, infer = passes(model, x, amp)
            t = {"forward": median_ms(fwd), "total": median_ms(total)}
            t["backward"] = t["total"] - t["forward"]
            t["inference"] = median_ms(infer)
            if graph:
                try:
                    t["total graphed"] = median_ms(graphed(total))
                except Exception as e:  # noqa: BLE001
                    t["total graphed"] = f"{type(e).__name__}: {str(e)[:160]}"
        except Exception as e:  # noqa: BLE001
            t = f"{type(e).__name__}: {str(e)[:300]}"
        res[f"B{B} {name}"] = t
        print(f"B{B} {name}:", t, flush=True)
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = True


def variants(fast: bool) -> dict:
    def rhn_model(impl):
        return lambda: rhn.RHN(I, H, D, impl=impl, device=DEV)

    def lstm():
        return bench.build("lstm-matched", I, H, D, DEV)

    v = {
        "rhn-triton bf16": (rhn_model("triton"), torch.bfloat16, "highest"),
        "rhn-triton tf32": (rhn_model("triton"), None, "high"),
        "rhn-triton fp32": (rhn_model("triton"), None, "highest"),
        "lstm-matched tf32 (cuDNN default)": (lstm, None, "high"),
        "lstm-matched bf16": (lstm, torch.bfloat16, "high"),
    }
    if fast:
        v["rhn-fast fp32"] = (rhn_model("fast"), None, "highest")
        v["rhn-fast bf16"] = (rhn_model("fast"), torch.bfloat16, "highest")
    return v


def timings(path: str) -> None:
    res = {"env": env(), "ms": {}}
    for B in (32, 1, 128):
        time_variants(B, variants(fast=B == 32), res["ms"])
        json.dump(res, open(path, "w"), indent=1)


SWEEP = {
    "bf16": [(32, 8, 1), (32, 8, 2), (64, 8, 1), (64, 8, 2), (64, 8, 3), (128, 8, 1),
             (64, 4, 1), (64, 16, 1), (32, 16, 2), (128, 16, 1), (16, 8, 1)],
    "tf32": [(16, 8, 2), (32, 8, 1), (32, 8, 2), (64, 8, 1), (32, 4, 1), (64, 16, 1),
             (32, 16, 1), (16, 8, 1)],
}  # fmt: skip
"""(BK, warps, stages) tried by ``sweep``."""


def sweep(path: str) -> None:
    res = {"env": env(), "default": {}, "ms": {}}
    x = torch.randn(T, 32, I, device=DEV)
    model = rhn.RHN(I, H, D, impl="triton", device=DEV)
    original = fused.config_for
    for amp, prec, size in ((torch.bfloat16, "highest", 2), (None, "high", 4)):
        torch.set_float32_matmul_precision(prec)
        tag = "bf16" if amp else "tf32"
        res["default"][tag] = str(
            original(H, 2, torch.bfloat16 if amp else torch.float32)
        )
        for bk, warps, stages in SWEEP[tag]:
            if stages * 2 * bk * 256 * size > 200_000:
                continue
            cfg = fused.Config(16, 256, bk, warps, stages)
            fused.config_for = lambda *a, cfg=cfg: cfg
            try:
                fwd, total, _ = passes(model, x, amp)
                t = {"forward": median_ms(fwd, 10), "total": median_ms(total, 10)}
            except Exception as e:  # noqa: BLE001
                t = f"{type(e).__name__}: {str(e)[:160]}"
            res["ms"][f"{tag} BK{bk} warps{warps} stages{stages}"] = t
            print(tag, cfg, t, flush=True)
        fused.config_for = original
        json.dump(res, open(path, "w"), indent=1)
    torch.set_float32_matmul_precision("highest")


if __name__ == "__main__":
    {"check": check, "time": timings, "sweep": sweep}[sys.argv[1]](sys.argv[2])
