"""Precision and kernels by the GPU's capability (rhn.devices), with CPU stand-ins.

No GPU runs these tests: ``torch.cuda``'s answers are replaced by those of a
T4 (compute capability 7.5, where ``is_bf16_supported()`` says True because
it counts emulation), an A100 (8.0), an H100 (9.0) and a P100 (6.0).
"""

from types import SimpleNamespace

import pytest
import torch

from rhn import bench, devices
from rhn import train as train_mod
from rhn.train import TrainConfig
from rhn.train import run as train_run

GPUS = {
    "Tesla T4": (7, 5),
    "Tesla V100-SXM2-16GB": (7, 0),
    "NVIDIA A100-SXM4-40GB": (8, 0),
    "NVIDIA L4": (8, 9),
    "NVIDIA H100 80GB HBM3": (9, 0),
    "Tesla P100-PCIE-16GB": (6, 0),
}


@pytest.fixture
def gpu(monkeypatch):
    """``gpu(name)``: make torch.cuda answer like that GPU (no GPU needed)."""

    def install(name):
        cap = GPUS[name]
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda d=None: cap)
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda d=None: name)
        # torch's own answer on a T4 counts emulation; rhn must not ask it
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
        return torch.device("cuda")

    return install


def test_a_cuda_index_beyond_the_machine_is_refused_in_one_line(gpu, monkeypatch):
    # a one-GPU machine: cuda:0 is there, cuda:7 is named as missing at once
    # (resolve_device is what a sweep checks its grid's devices with, before
    # its first run; tests/test_run_folder.py checks that order)
    from rhn.train.config import resolve_device

    gpu("NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0") == torch.device("cuda:0")
    with pytest.raises(ValueError, match=r"'cuda:7'.*has 1 CUDA device \(cuda:0 to"):
        resolve_device("cuda:7")


def test_t4_gets_float16_with_a_grad_scaler(gpu):
    cuda = gpu("Tesla T4")
    chosen = devices.precision(cuda)
    assert (chosen.dtype, chosen.grad_scaler) == (torch.float16, True)
    assert "Tesla T4" in chosen.reason and "7.5" in chosen.reason
    assert devices.precision(cuda, amp=True).dtype == torch.float16


@pytest.mark.parametrize(
    "name", ["NVIDIA A100-SXM4-40GB", "NVIDIA L4", "NVIDIA H100 80GB HBM3"]
)
def test_ampere_and_newer_get_bfloat16_without_scaling(gpu, name):
    chosen = devices.precision(gpu(name))
    assert (chosen.dtype, chosen.grad_scaler) == (torch.bfloat16, False)


def test_volta_gets_float16_and_pascal_full_precision(gpu):
    assert devices.precision(gpu("Tesla V100-SXM2-16GB")).dtype == torch.float16
    cuda = gpu("Tesla P100-PCIE-16GB")
    p100 = devices.precision(cuda)
    assert (p100.dtype, p100.grad_scaler) == (None, False)
    assert "no tensor cores" in p100.reason
    forced = devices.precision(cuda, amp=True)  # asked for: float16, scaled
    assert (forced.dtype, forced.grad_scaler) == (torch.float16, True)


def test_amp_false_and_the_cpu_and_mps(gpu):
    cuda = gpu("NVIDIA H100 80GB HBM3")
    assert devices.precision(cuda, amp=False).dtype is None
    assert devices.precision("cpu").dtype is None
    assert devices.precision("cpu", amp=True) == devices.Precision(
        torch.bfloat16, False, "amp=True on the CPU: bfloat16"
    )
    assert devices.precision("mps", amp=True).dtype is None
    assert devices.capability("cpu") is None and devices.capability(cuda) == (9, 0)


def _run_precision(amp, device="cuda"):
    # the trainer's own set-up, on a stand-in run (a real one would build the
    # model on the GPU)
    run = SimpleNamespace(device=torch.device(device), config=TrainConfig(amp=amp))
    train_run._Run._setup_precision(run)
    return run


def test_the_trainer_on_a_t4_uses_float16_and_a_grad_scaler(gpu):
    gpu("Tesla T4")
    run = _run_precision(amp=None)
    assert run.use_amp and run.amp_dtype == torch.float16
    assert run.scaler.is_enabled()


def test_the_trainer_on_an_a100_and_h100_uses_bfloat16_unscaled(gpu):
    for name in ("NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"):
        gpu(name)
        run = _run_precision(amp=None)
        assert run.use_amp and run.amp_dtype == torch.bfloat16
        assert not run.scaler.is_enabled()
    off = _run_precision(amp=False)
    assert not off.use_amp and not off.scaler.is_enabled()


def test_the_trainer_on_the_cpu_is_unchanged():
    assert not _run_precision(amp=None, device="cpu").use_amp
    run = _run_precision(amp=True, device="cpu")
    assert run.use_amp and run.amp_dtype == torch.bfloat16
    assert not run.scaler.is_enabled()


def test_cuda_graph_refuses_the_chorales_with_a_clear_error():
    config = train_mod.TrainConfig.for_task(
        "chorales", model="gru", device="cpu", progress=False, cuda_graph=True
    )
    with pytest.raises(ValueError, match=r"cuda_graph=True cannot replay task "):
        train_mod.train(config)


def test_triton_is_refused_below_compute_capability_8(gpu):
    cuda = gpu("Tesla T4")
    problem = devices.triton_problem(cuda)
    assert "compute capability 8.0" in problem and "Tesla T4" in problem
    assert "impl='fast'" in problem
    with pytest.raises(RuntimeError, match=r"8\.0 or newer.*7\.5"):
        devices.check_triton(cuda)
    assert "rhn-triton" not in bench.default_models(cuda)
    with pytest.raises(ValueError, match="rhn-triton.*compute capability 8.0"):
        bench.check_models(["rhn-triton"], cuda)
    assert devices.triton_problem("cpu") is None  # the CPU is rhn.fused's concern


@pytest.mark.parametrize("name", ["NVIDIA A100-SXM4-40GB", "NVIDIA H100 80GB HBM3"])
def test_triton_is_allowed_from_compute_capability_8(gpu, name):
    cuda = gpu(name)
    assert devices.triton_problem(cuda) is None
    devices.check_triton(cuda)


def test_the_triton_layer_checks_the_gpu_before_launching(gpu):
    pytest.importorskip("triton")
    from rhn import fused

    gpu("Tesla T4")
    on_gpu = SimpleNamespace(device=torch.device("cuda"))  # no tensor needed
    with pytest.raises(RuntimeError, match="compute capability 8.0"):
        fused._check_device(on_gpu)
    gpu("NVIDIA A100-SXM4-40GB")
    fused._check_device(on_gpu)  # passes: the kernels would launch


@pytest.mark.parametrize(
    ("name", "task", "amp", "cuda_graph", "want"),
    [
        ("NVIDIA H100 80GB HBM3", "adding", None, None, True),  # the default
        ("NVIDIA A100-SXM4-40GB", "adding", False, None, True),  # full precision
        ("NVIDIA H100 80GB HBM3", "chorales", None, None, False),  # shapes change
        ("Tesla T4", "adding", None, None, False),  # float16 needs a GradScaler
        ("Tesla T4", "adding", False, None, True),  # ... unless amp is off
        ("NVIDIA H100 80GB HBM3", "adding", None, False, False),  # asked not to
        ("NVIDIA H100 80GB HBM3", "adding", None, True, True),  # asked to
    ],
)
def test_the_trainer_replays_cuda_graphs_by_default_where_it_can(
    gpu, name, task, amp, cuda_graph, want
):
    cuda = gpu(name)
    config = TrainConfig(task=task, amp=amp, cuda_graph=cuda_graph, device="cpu")
    stand_in = SimpleNamespace(
        config=config, device=cuda, task=train_run.get_task(task), masked=False
    )
    assert train_run._Run._use_graph(stand_in) is want
    # a task with a loss mask never replays by default: the captured step
    # takes (inputs, targets) only
    stand_in.masked = True
    assert train_run._Run._use_graph(stand_in) is (cuda_graph is True)


def test_on_the_cpu_the_default_never_captures():
    config = TrainConfig(steps=2, eval_every=2, eval_samples=8, batch_size=4,
                         seq_len=5, progress=False, device="cpu")  # fmt: skip
    assert config.cuda_graph is None
    result = train_mod.train(config)
    assert result.metrics["steps"] == 2
