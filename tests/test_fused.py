"""The optional Triton path (rhn.fused): selection, errors, and its kernels.

The kernels themselves are checked in Triton's interpreter by
``tests/triton_interpreted.py``, run here in a subprocess so that
``TRITON_INTERPRET=1`` never reaches the other tests of this process.
"""

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import rhn
from rhn import cells, fast

ROOT = Path(__file__).resolve().parent.parent


def test_auto_picks_triton_on_a_capable_gpu_and_the_fast_path_elsewhere(monkeypatch):
    cpu = torch.zeros(1)
    cuda = SimpleNamespace(device=torch.device("cuda"))  # no GPU needed
    has_triton = cells.importlib.util.find_spec("triton") is not None
    assert cells._select_run_layer("auto", cpu) is fast.rhn_layer
    assert cells._select_run_layer("fast", cuda) is fast.rhn_layer
    assert cells._select_run_layer("loop", cuda) is None
    for cap, want_triton in (((9, 0), True), ((8, 0), True), ((7, 5), False)):
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda d, c=cap: c)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda d: "a stand-in GPU")
        monkeypatch.setattr(cells, "_fused_available", lambda: True)
        picked = cells._select_run_layer("auto", cuda)
        if want_triton:
            assert picked is not fast.rhn_layer and picked.__module__ == "rhn.fused"
        else:  # a T4 (sm_75): Triton is not supported there
            assert picked is fast.rhn_layer
        monkeypatch.setattr(cells, "_fused_available", lambda: False)
        assert cells._select_run_layer("auto", cuda) is fast.rhn_layer
    if has_triton:
        from rhn import fused

        assert cells._select_run_layer("triton", cpu) is fused.rhn_layer
    assert rhn.RHN(2, 3, 1).impl == "auto"
    assert "impl" not in repr(rhn.RHN(2, 3, 1))


def test_triton_without_triton_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(cells, "_fused_available", lambda: False)
    with pytest.raises(ValueError, match=r"impl='triton'.*rhn\[triton\]"):
        rhn.RHN(2, 3, 1, impl="triton")


def test_triton_on_cpu_without_interpreter_is_a_clear_error():
    pytest.importorskip("triton")
    from rhn import fused

    if fused.interpreted():
        pytest.skip("this process runs Triton's interpreter")
    model = rhn.RHN(2, 3, 1, impl="triton")
    with pytest.raises(RuntimeError, match="CUDA tensors.*TRITON_INTERPRET"):
        model(torch.randn(4, 2, 2))


def test_kernels_in_the_interpreter():
    pytest.importorskip("triton")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        + ["tests/triton_interpreted.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout


def _signature(names, pointers, constexprs):
    """A Triton signature: pointer args typed, the sizes (T, B, D) i32."""
    sig = {}
    for name in names:
        if name in constexprs:
            sig[name] = "constexpr"
        elif name in pointers:
            sig[name] = f"*{pointers[name]}"
        else:
            sig[name] = "i32"
    return sig


# The shared memory a program may use (cudaDevAttrMaxSharedMemoryPerBlockOptin)
SHARED_LIMIT = {80: 166_912, 90: 232_448}
DTYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
          torch.float64: "fp64"}  # fmt: skip


def _compile(kernel_name, sm, hidden, gates, mm, work, keep=True):
    """Compile one kernel as rhn.fused launches it, for GPU ``sm`` (no GPU needed).

    Pointers carry the 16-byte alignment that the runtime specialises on
    (every torch allocation has it), as at a real launch.
    """
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from rhn import fused

    cfg = fused.config_for(hidden, gates, mm)
    args = fused._launch_args(cfg, mm, work)
    options = {"num_warps": args.pop("num_warps"), "num_stages": args.pop("num_stages")}
    args |= {"PREC": "tf32" if mm == torch.float32 else "ieee", "EMULATE": False}
    kernel = getattr(fused, kernel_name)
    if kernel_name == "_forward_kernel":
        ptrs = {"x_ptr": mm, "w_ptr": mm} | {
            n: work for n in ("s0_ptr", "mask_ptr", "b_ptr", "s_ptr", "y_ptr")
        }
        args["KEEP"] = keep
    else:
        ptrs = {"w_ptr": mm, "z_ptr": mm} | {
            n: work
            for n in ("go_ptr", "gf_ptr", "mask_ptr", "s_ptr", "y_ptr", "gs0_ptr")
        }
    constexprs = args | {"G": gates, "H": cfg.block_hidden, "COUPLED": gates == 2}
    constexprs["HAS_MASK"] = True
    sig = _signature(
        kernel.arg_names, {k: DTYPES[v] for k, v in ptrs.items()}, constexprs
    )
    attrs = {
        (i,): [["tt.divisibility", 16]]
        for i, name in enumerate(kernel.arg_names)
        if name in ptrs
    }
    src = ASTSource(fn=kernel, signature=sig, constexprs=constexprs, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", sm, 32), options=options)


# (sm, H, gates, products' dtype, state's dtype): the largest tiles that
# config_for picks for each products' dtype (H = 256 and 512, three gates),
# on the A100's smaller shared memory, and the autocast and float64 cases
COMPILE_CASES = [
    (80, h, g, mm, wk)
    for h in (256, 512)
    for g in (2, 3)
    for mm, wk in ((torch.bfloat16, torch.float32), (torch.float32, torch.float32),
                   (torch.float64, torch.float64))
] + [(90, 256, 2, torch.bfloat16, torch.float32), (90, 48, 3, torch.float16,
                                                    torch.float16)]  # fmt: skip


@pytest.mark.parametrize(("sm", "hidden", "gates", "mm", "work"), COMPILE_CASES)
def test_kernels_compile_within_the_gpus_shared_memory(
    monkeypatch, tmp_path, sm, hidden, gates, mm, work
):
    # The interpreter checks what the kernels compute; this checks that the
    # compiler accepts every tile configuration rhn.fused can pick, that it
    # fits the shared memory of that GPU, and that the products stream R_k
    # with 16-byte loads (R_k read one number at a time was much slower on an
    # H100)
    pytest.importorskip("triton")
    from rhn import fused

    if fused.interpreted():
        pytest.skip("this process runs Triton's interpreter")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # the default, stated
    for name in ("_forward_kernel", "_backward_kernel"):
        compiled = _compile(name, sm, hidden, gates, mm, work)
        ptx = compiled.asm["ptx"]
        assert compiled.asm["cubin"] and f".target sm_{sm}" in ptx
        assert compiled.metadata.shared <= SHARED_LIMIT[sm], (name, compiled.metadata)
        wide = re.findall(
            r"cp\.async\.cg\.shared\.global|ld\.global\S*\.(?:v4|v2\.b64)", ptx
        )
        # scalar global loads: a handful at most (R_k read one number at a
        # time would be dozens per tile)
        scalar = re.findall(r"ld\.global(?:\.nc)?\.(?:b16|b32|b64|f32|f64)\s", ptx)
        assert wide and len(scalar) <= 4, (name, len(scalar))
        if work in (torch.float16, torch.bfloat16):
            # 16-bit values are only converted: all sums are float32 or wider.
            # (A product of two 16-bit numbers is exact in float32, so the
            # compiler may multiply s m in 16 bits when its result is rounded
            # to 16 bits anyway, for the next product: the same number.)
            arithmetic = re.findall(
                r"^\s*(?:add|sub|fma|neg|ex2|rcp|div)\S*", ptx, re.M
            )
            assert arithmetic and not [op for op in arithmetic if "f16" in op]


def test_inference_kernel_compiles(monkeypatch, tmp_path):
    pytest.importorskip("triton")
    from rhn import fused

    if fused.interpreted():
        pytest.skip("this process runs Triton's interpreter")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    compiled = _compile(
        "_forward_kernel", 80, 256, 2, torch.bfloat16, torch.float32, keep=False
    )
    assert compiled.metadata.shared <= SHARED_LIMIT[80]
