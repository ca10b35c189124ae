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


def test_auto_picks_the_fast_path_until_triton_has_run_on_a_gpu():
    cpu = torch.zeros(1)
    cuda = SimpleNamespace(device=torch.device("cuda"))  # no GPU needed
    assert cells._select_run_layer("auto", cpu) is fast.rhn_layer
    assert cells._select_run_layer("auto", cuda) is fast.rhn_layer
    assert cells._select_run_layer("fast", cuda) is fast.rhn_layer
    assert cells._select_run_layer("loop", cuda) is None
    if cells.importlib.util.find_spec("triton") is not None:
        from rhn import fused

        assert cells._select_run_layer("triton", cpu) is fused.rhn_layer
        assert cells._select_run_layer("triton", cuda) is fused.rhn_layer
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
    """A Triton signature: pointer args typed, ``n``/``H``/``base_row`` i32."""
    sig = {}
    for name in names:
        if name in constexprs:
            sig[name] = "constexpr"
        elif name in pointers:
            sig[name] = f"*{pointers[name]}"
        else:
            sig[name] = "i32"
    return sig


# (sm, products' dtype, state's dtype): autocast (bf16/fp16 products, fp32
# state), full precision, float64 (chapter 11's check), and 16-bit models
# (their state in bf16/fp16: computed in float32 and cast on store), for the
# T4 (sm_75, which rhn refuses, see rhn.devices, but the code compiles), the
# A100 (sm_80) and the H100 (sm_90)
COMPILE_CASES = [
    (80, "bf16", "fp32"),
    (80, "fp32", "fp32"),
    (80, "fp64", "fp64"),
    (90, "fp16", "fp32"),
    *[(sm, w, w) for sm in (75, 80, 90) for w in ("bf16", "fp16")],
]


@pytest.mark.parametrize(("sm", "low", "work"), COMPILE_CASES)
def test_kernels_compile_for_a_gpu_without_one(monkeypatch, tmp_path, sm, low, work):
    # The interpreter checks what the kernels compute; this checks that the
    # compiler accepts them: Triton compiles to a cubin for a GPU of that
    # architecture with its bundled ptxas, no GPU or driver needed.
    pytest.importorskip("triton")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from rhn import fused

    if fused.interpreted():
        pytest.skip("this process runs Triton's interpreter")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # the default, stated
    # work: the state's dtype (fp64 for a float64 model, as chapter 11's
    # Triton check runs on a GPU); low: the products' dtype
    cases = [
        (
            fused._micro_forward_kernel,
            {"p_ptr": low, "base_ptr": low, "s_in_ptr": low, "s_ptr": work}
            | {"mask_ptr": work, "s_out_ptr": work, "y_ptr": work},
            {"G": 3, "COUPLED": False, "HAS_MASK": True, "SAVE": True, "BLOCK": 1024},
        ),
        (
            fused._micro_backward_kernel,
            {"back_ptr": low, "z_ptr": low, "gc_ptr": work, "go_ptr": work}
            | {"mask_ptr": work, "y_ptr": work, "s_ptr": work},
            {"G": 2, "COUPLED": True, "HAS_BACK": True, "HAS_GO": True}
            | {"HAS_MASK": True, "BLOCK": 1024},
        ),
    ]
    for kernel, pointers, constexprs in cases:
        sig = _signature(kernel.arg_names, pointers, constexprs)
        src = ASTSource(fn=kernel, signature=sig, constexprs=constexprs)
        compiled = triton.compile(src, target=GPUTarget("cuda", sm, 32))
        ptx = compiled.asm["ptx"]
        assert compiled.asm["cubin"] and f".target sm_{sm}" in ptx
        # 16-bit values are only converted: all arithmetic is float32 or wider
        arithmetic = re.findall(
            r"^\s*(?:add|sub|mul|fma|neg|ex2|rcp|div)\S*", ptx, re.M
        )
        assert arithmetic and not [op for op in arithmetic if "f16" in op], kernel
