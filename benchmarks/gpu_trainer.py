"""rhn.train on a GPU: ms per optimiser step for the RHN and the LSTM/GRU.

    PYTHONPATH=. python benchmarks/gpu_trainer.py OUT.json

The adding problem (the book's chapter 11 setting) and the chorales, eager
and with ``cuda_graph=True``, with the trainer's own precision (``amp=None``)
and with ``amp=False``. Writes a JSON record naming the GPU.
"""

from __future__ import annotations

import json
import sys
import time

import torch

from rhn import devices
from rhn import train as tr


def main(path: str) -> None:
    res = {
        "env": {
            "gpu": torch.cuda.get_device_name(),
            "torch": torch.__version__,
            "precision": str(devices.precision("cuda")),
        },
        "runs": {},
    }

    def run(name: str, task: str = "adding", **kw) -> None:
        steps = kw.pop("steps", 300)
        cfg = tr.TrainConfig.for_task(
            task, device="cuda", progress=False, steps=steps, eval_every=steps, **kw
        )
        t0 = time.perf_counter()
        try:
            m = tr.train(cfg).metrics
        except Exception as e:  # noqa: BLE001
            res["runs"][name] = f"{type(e).__name__}: {str(e)[:300]}"
        else:
            res["runs"][name] = {
                "ms_per_step": round(1e3 * m["seconds"] / m["steps"], 2),
                "wall_s": round(time.perf_counter() - t0, 2),
                "steps": m["steps"],
                "test_loss": m["test_loss"],
                "hidden_size": m["hidden_size"],
            }
        print(name, res["runs"][name], flush=True)
        json.dump(res, open(path, "w"), indent=1)

    for model in ("rhn", "lstm", "gru"):
        run(f"adding {model} eager", model=model)
        run(f"adding {model} graph", model=model, cuda_graph=True)
    run("adding rhn eager amp=False", model="rhn", amp=False)
    run("adding rhn graph amp=False", model="rhn", amp=False, cuda_graph=True)
    for model in ("rhn", "lstm"):
        run(f"chorales {model} eager", task="chorales", model=model, steps=100)
    run(
        "chorales rhn eager amp=False",
        task="chorales",
        model="rhn",
        amp=False,
        steps=100,
    )


if __name__ == "__main__":
    main(sys.argv[1])
