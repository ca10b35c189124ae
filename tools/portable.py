"""Run the book under other CPUs' arithmetic, on this CPU.

Training outcomes of short runs are chaotic in the last bits of floating
point, and those bits depend on which code paths torch (ATen's SIMD kernels),
MKL (matrix products) and oneDNN take, and on the number of threads. These
variables choose the paths, so one machine can stand in for several:

    python tools/portable.py list
    python tools/portable.py notebooks book/05_highway.ipynb book/11_training.ipynb
    python tools/portable.py record spirals --out rhn/_data/results/spirals.json

``notebooks`` executes every notebook under every variant (as a reader's
machine would, from the notebook's folder) and fails if any cell fails.
``record`` runs ``python -m rhn.studies NAME`` under every variant and merges
the results into one record, each variant with the machine that made it.
``spread CHECK`` runs one of the live reruns of ``rhn.studies.reruns`` under
every variant and stores, in the record that the rerun retraces, the largest
relative deviation from it at every evaluation: the pages' tolerance.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name -> variables; "native" is whatever this machine picks by itself. On an
# AMD EPYC with AVX-512, torch 2.13: ATen's "default" kernels change almost every
# rounding, "avx2" changes the sigmoid, MKL's "COMPATIBLE" path changes matrix
# products; MKL already runs its AVX2 path there (AVX512 is refused on AMD), and
# oneDNN and a second thread did not change the float32 ops the book uses.
VARIANTS: dict[str, dict[str, str]] = {
    "native": {},
    # an AVX2 machine (most laptops, many cloud CPUs)
    "avx2": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_CBWR": "AVX2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
    },
    # the lowest common denominator: no vector extensions beyond SSE4
    "sse": {
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_CBWR": "COMPATIBLE",
        "ONEDNN_MAX_CPU_ISA": "SSE41",
    },
    # only the matrix products on MKL's compatible path
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
    # only torch's own kernels without vector extensions
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    # an AVX-512 machine's matrix products (Intel Xeon), where the CPU has them
    "avx512": {
        "ATEN_CPU_CAPABILITY": "avx512",
        "MKL_CBWR": "AVX512",
        "MKL_ENABLE_INSTRUCTIONS": "AVX512",
    },
    # two threads: reductions split differently
    "threads2": {"OMP_NUM_THREADS": "2"},
}
# the variants a record is made under (those that changed roundings here)
RECORD_VARIANTS = ("native", "avx2", "sse", "mkl-compatible", "aten-default")
# a cache of finished variants, so that an interrupted record resumes
CACHE = ROOT / ".portable-cache"


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def available() -> dict[str, dict[str, str]]:
    """The variants this CPU can run (AVX2 and AVX-512 ones need the instructions)."""
    flags = cpu_flags()
    out = {}
    for name, env in VARIANTS.items():
        if name == "avx2" and "avx2" not in flags:
            continue
        if name == "avx512" and "avx512f" not in flags:
            continue
        out[name] = env
    return out


def variant_env(env: dict[str, str]) -> dict[str, str]:
    full = dict(os.environ)
    for key in (
        "ATEN_CPU_CAPABILITY",
        "MKL_CBWR",
        "MKL_ENABLE_INSTRUCTIONS",
        "ONEDNN_MAX_CPU_ISA",
    ):
        full.pop(key, None)
    full.setdefault("OMP_NUM_THREADS", "1")
    full.update(env)
    full["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in full.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    return full


def run_notebook(path: Path, name: str, env: dict[str, str], timeout: int) -> tuple:
    """Execute a notebook under one variant, in a fresh kernel: (ok, seconds, error).

    It runs in an empty folder of its own, as a reader who opened it alone
    would, so that variants running at once never share the files a chapter
    writes (checkpoints, runs/).
    """
    work = Path(tempfile.mkdtemp(prefix=f"portable-{name}-"))
    code = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        f"nb = nbformat.read({str(path)!r}, as_version=4)\n"
        f"meta = {{'metadata': {{'path': {str(work)!r}}}}}\n"
        f"NotebookClient(nb, timeout={timeout}, kernel_name='python3',\n"
        f"               resources=meta).execute()\n"
    )
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code],
            env=variant_env(env),
            capture_output=True,
            text=True,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.perf_counter() - start
    error = ""
    if proc.returncode != 0:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", proc.stderr)  # IPython's colours
        lines = [ln for ln in plain.splitlines() if ln.strip()]
        error = "\n".join(lines[-12:])
    return proc.returncode == 0, seconds, error


def cmd_notebooks(args: argparse.Namespace) -> int:
    variants = available()
    if args.variants:
        unknown = sorted(set(args.variants) - set(variants))
        if unknown:
            print(
                f"--variants: {unknown} not available here; choose from "
                f"{sorted(variants)}",
                file=sys.stderr,
            )
            return 2
        variants = {k: variants[k] for k in args.variants}
    paths = [Path(p).resolve() for p in args.paths]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"no such notebook: {missing[0]}", file=sys.stderr)
        return 2
    jobs = [(p, name, env) for name, env in variants.items() for p in paths]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {
            pool.submit(run_notebook, p, n, e, args.timeout): (p, n) for p, n, e in jobs
        }
        for future in concurrent.futures.as_completed(futures):
            p, n = futures[future]
            ok, seconds, error = future.result()
            print(
                f"{'ok  ' if ok else 'FAIL'} {n:<9} {p.name:<28} {seconds:6.0f} s",
                flush=True,
            )
            if not ok:
                failed += 1
                print("     " + error.replace("\n", "\n     "), flush=True)
    print(f"{len(jobs) - failed} passed, {failed} failed")
    return 1 if failed else 0


def record_variants() -> dict[str, dict[str, str]]:
    here = available()
    return {name: here[name] for name in RECORD_VARIANTS if name in here}


def ci_variants(flags: set[str] | None = None) -> dict[str, dict[str, str]]:
    """What CI runs, within its time: ``sse`` (torch's plain kernels and MKL's
    compatible products at once, the furthest from any machine's own), and
    ``avx2`` where the CPU has AVX-512 (elsewhere AVX2 is its own path)."""
    flags = cpu_flags() if flags is None else flags
    names = ["avx2", "sse"] if "avx512f" in flags else ["sse"]
    return {name: VARIANTS[name] for name in names}


def run_variants(folder: Path, argv: list[str], jobs: int) -> dict[str, dict]:
    """``python -m rhn.studies ARGV --out FOLDER/VARIANT.json`` under every
    record variant (those already in ``folder`` are kept: a rerun resumes)."""
    variants = record_variants()
    folder.mkdir(parents=True, exist_ok=True)

    def one(name: str) -> tuple[str, int, str]:
        target = folder / f"{name}.json"
        if target.is_file():
            return name, 0, ""
        part = folder / f"{name}.part.json"
        proc = subprocess.run(
            [sys.executable, "-m", "rhn.studies", *argv, "--out", str(part)],
            env=variant_env(variants[name]),
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0:
            part.replace(target)
        return name, proc.returncode, proc.stderr[-2000:]

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        outcomes = list(pool.map(one, variants))
    for name, rc, err in outcomes:
        if rc != 0:
            raise SystemExit(f"variant {name} failed:\n{err}")
    return {n: json.loads((folder / f"{n}.json").read_text()) for n in variants}


def write_json(path: Path, record: dict) -> None:
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(record, indent=None, separators=(",", ":")) + "\n")
    part.replace(path)


def cmd_record(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    folder = CACHE / f"{args.study}-{args.seeds}"
    outputs = run_variants(folder, [args.study, "--seeds", args.seeds], args.jobs)
    command = f"python tools/portable.py record {args.study} --seeds {args.seeds}"
    out = Path(args.out).resolve()
    # the command as run from the repository: no machine's own paths in a record
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    record = {
        "format": 1,
        "study": args.study,
        "command": f"{command} --out {shown}",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": next(iter(outputs.values()))["settings"],
        "variants": {
            name: {"machine": data["machine"], "runs": data["runs"]}
            for name, data in outputs.items()
        },
    }
    write_json(Path(args.out), record)
    seconds = time.perf_counter() - start
    print(f"wrote {args.out} ({len(outputs)} variants) in {seconds:.0f} s")
    return 0


def cmd_spread(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(ROOT))
    from rhn import results
    from rhn.studies import reruns

    start = time.perf_counter()
    folder = CACHE / f"spread-{args.check}"
    runs = run_variants(folder, ["rerun", "--check", args.check], args.jobs)
    worst: dict[str, list[float]] = {}
    for data in runs.values():
        for key, devs in reruns.deviations(data["curves"], data["saved"]).items():
            old = worst.setdefault(key, [0.0] * len(devs))
            worst[key] = [max(a, b) for a, b in zip(old, devs, strict=True)]
    path = results.folder() / reruns.RECORDS[args.check]
    record = json.loads(path.read_text())
    measured = {
        name: {"machine": data["machine"], "curves": data["curves"]}
        for name, data in runs.items()
    }
    # another CPU's spread is kept, not replaced: the allowance is the worst
    # drift of any variant on any machine measured (an entry of another CPU
    # under the same variant name is stored as "variant @ cpu")
    old = record.get("variant_spread") or {}
    if old.get("check") == args.check:
        for key, devs in old["max_deviation"].items():
            new = worst.get(key, [0.0] * len(devs))
            worst[key] = [max(a, b) for a, b in zip(new, devs, strict=True)]
        kept = dict(old["variants"])
        for name, entry in measured.items():
            cpu = entry["machine"]["cpu"]
            same_cpu = kept.get(name, entry)["machine"]["cpu"] == cpu
            kept[name if same_cpu else f"{name} @ {cpu}"] = entry
        measured = kept
    record["variant_spread"] = {
        "check": args.check,
        "command": f"python tools/portable.py spread {args.check}",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "max_deviation": worst,
        "variants": measured,
    }
    write_json(path, record)
    for key, devs in worst.items():
        print(
            f"{args.check} {key}: largest deviation per evaluation "
            + " ".join(f"{d:.1e}" for d in devs)
        )
    print(f"wrote the spread into {path.name} in {time.perf_counter() - start:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    lst = sub.add_parser("list", help="the variants this CPU can run")
    lst.add_argument("--names", action="store_true", help="names only, one line")
    which = lst.add_mutually_exclusive_group()  # both at once: a one-line error
    which.add_argument(
        "--record", action="store_true", help="only those records and make portable use"
    )
    which.add_argument(
        "--ci", action="store_true", help="only those CI runs (.ci/run, make portable)"
    )
    lst.add_argument("--except", dest="skip", nargs="*", default=[], help="leave out")
    nb = sub.add_parser("notebooks", help="execute notebooks under every variant")
    nb.add_argument("paths", nargs="+")
    nb.add_argument("--variants", nargs="*", help="a subset of the variants")
    nb.add_argument("--jobs", type=int, default=2, help="notebooks at once (default 2)")
    nb.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    rec = sub.add_parser("record", help="run a study under every variant, merge")
    rec.add_argument("study", choices=["spirals", "spirals20", "race"])
    rec.add_argument("--seeds", default="0-9")
    rec.add_argument("--out", required=True)
    rec.add_argument("--jobs", type=int, default=2)
    spr = sub.add_parser("spread", help="a live rerun under every variant")
    spr.add_argument("check")
    spr.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if args.command == "spread":
        return cmd_spread(args)
    if args.command == "list":
        if args.ci:
            chosen = ci_variants()
        else:
            chosen = record_variants() if args.record else available()
        if args.names:
            print(" ".join(n for n in chosen if n not in args.skip))
            return 0
        for name, env in chosen.items():
            text = " ".join(f"{k}={v}" for k, v in env.items()) or "(as is)"
            print(f"{name:<9} {text}")
        return 0
    if args.command == "notebooks":
        return cmd_notebooks(args)
    return cmd_record(args)


if __name__ == "__main__":
    sys.exit(main())
