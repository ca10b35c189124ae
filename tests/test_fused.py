"""The optional Triton path (rhn.fused): selection, errors, and its kernels.

The kernels themselves are checked in Triton's interpreter by
``tests/triton_interpreted.py``, run here in a subprocess so that
``TRITON_INTERPRET=1`` never reaches the other tests of this process.
"""

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

import rhn
from rhn import cells, fast

ROOT = Path(__file__).resolve().parent.parent


def test_auto_picks_triton_only_for_cuda_with_triton(monkeypatch):
    cpu = torch.zeros(1)
    cuda = SimpleNamespace(device=torch.device("cuda"))  # no GPU needed
    assert cells._select_run_layer("auto", cpu) is fast.run_layer
    assert cells._select_run_layer("fast", cuda) is fast.run_layer
    assert cells._select_run_layer("loop", cuda) is None
    monkeypatch.setattr(cells, "_fused_available", lambda: False)
    assert cells._select_run_layer("auto", cuda) is fast.run_layer
    if cells.importlib.util.find_spec("triton") is not None:
        from rhn import fused

        monkeypatch.setattr(cells, "_fused_available", lambda: True)
        assert cells._select_run_layer("auto", cuda) is fused.run_layer
        assert cells._select_run_layer("triton", cpu) is fused.run_layer
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
