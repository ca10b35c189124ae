"""Run every chapter as a Colab reader does: alone, in Colab's packages, offline.

A reader opens one chapter from the rocket button: the notebook alone in an
empty directory, Colab's preinstalled packages, and the notebook's own
set-up cell installing ``rhn`` from the repository. This script does the same
on this machine (``make colab``; ``.ci/run`` after ``make test``):

1. a virtual environment with Colab's versions of the packages a reader
   meets (:data:`COLAB`; the CPU build of torch stands in for Colab's CUDA
   build), built once under a cache folder and reused;
2. a snapshot of this working tree as a git repository, which the set-up
   cell installs from (``RHN_SOURCE=git+file://...``) instead of GitHub;
3. for each chapter, a kernel of that environment in an empty folder holding
   only the notebook, with no network: pip runs with ``--no-index`` from a
   local wheelhouse (the build back end), and ``tools/colab_site``'s
   ``sitecustomize`` refuses every connection that leaves the machine, in
   the kernel and in everything it starts; ``google.colab`` is a stand-in
   (``tools/colab_site/google``), so anywidget takes its Colab path;
4. the chapter runs top to bottom; afterwards every package that was
   installed before has its version, ``rhn`` was installed from the
   snapshot, nothing tried the network, and ``rhn`` is uninstalled again
   (each Colab session starts fresh).

It fails (exit 1) if any chapter fails, any version changed, or anything
reached for the network, and prints one line per chapter. Executed notebooks
are written to ``test-output/colab/`` for inspection.

    python tools/colab.py                       # every chapter
    python tools/colab.py --chapters 01 04      # some, by number
    RHN_COLAB_CACHE=/tmp/colab python tools/colab.py   # cache elsewhere

Building the environment needs the package index once; running the chapters
needs no network. The chapters run with ``OMP_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SITE = Path(__file__).resolve().parent / "colab_site"

# Colab's versions of the packages a reader meets (its published pip freeze,
# Aug 2026), on this machine's Python (Colab runs 3.12). torch is the CPU
# build of the version the book pins; Colab's is a CUDA build (2.11.0+cu128).
COLAB = {
    "pip": "24.1.2",
    "torch": "2.13.0",
    "numpy": "2.1.3",
    "matplotlib": "3.10.0",
    "ipywidgets": "7.7.1",
    "widgetsnbextension": "3.6.10",
    "anywidget": "0.9.21",
    "ipykernel": "6.17.1",
    "ipython": "7.34.0",
    "tqdm": "4.67.3",
}
# what the set-up cell's pip needs offline: the build back end of pyproject.toml
WHEELHOUSE = ["setuptools>=64", "wheel"]
KERNEL = "rhn-colab-stand-in"


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "rhn-colab"
    return Path(os.environ.get("RHN_COLAB_CACHE", default))


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
            + done.stdout[-3000:]
            + done.stderr[-3000:]
        )
    return done


def environment(cache: Path) -> tuple[Path, Path]:
    """The Colab environment's Python and the wheelhouse, built if missing."""
    key = json.dumps([sys.version_info[:2], COLAB, WHEELHOUSE], sort_keys=True)
    name = f"py{sys.version_info[0]}{sys.version_info[1]}-"
    name += hashlib.sha256(key.encode()).hexdigest()[:10]
    venv, wheels = cache / name, cache / f"{name}-wheels"
    python, stamp = venv / "bin" / "python", venv / ".complete"
    if stamp.is_file():
        return python, wheels
    print(f"building the Colab environment in {venv} (once)", flush=True)
    shutil.rmtree(venv, ignore_errors=True)
    shutil.rmtree(wheels, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "install", "-q", f"pip=={COLAB['pip']}"])
    pins = [f"{n}=={v}" for n, v in COLAB.items() if n != "pip"]
    _run([*pip, "install", "-q", *pins])
    _run(
        [*pip, "download", "-q", "--only-binary", ":all:", "-d", str(wheels)]
        + WHEELHOUSE
    )
    stamp.write_text(key)
    return python, wheels


def installed(python: Path) -> dict[str, str]:
    """``{name: version}`` of the environment's distributions, as imports see them."""
    code = (
        "import importlib.metadata as m, json\n"
        "ds = reversed([*m.distributions()])\n"
        "print(json.dumps({str(d.name).lower().replace('_', '-'): d.version "
        "for d in ds}))"
    )
    return json.loads(_run([str(python), "-c", code]).stdout)


def snapshot(dest: Path) -> str:
    """This working tree (tracked and new files, not ignored) as a git repository.

    Returns the ``RHN_SOURCE`` that installs from it.
    """
    listed = _run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT)
    for rel in filter(None, listed.stdout.split("\0")):
        src = ROOT / rel
        if src.is_file():  # not deleted in the working tree
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git = ["git", "-c", "user.name=colab", "-c", "user.email=colab@localhost"]
    _run([*git, "init", "-q"], cwd=dest)
    _run([*git, "add", "-A"], cwd=dest)
    _run([*git, "commit", "-q", "-m", "snapshot for tools/colab.py"], cwd=dest)
    return f"git+{dest.as_uri()}"


def kernel_setup(work: Path, python: Path) -> tuple[Path, Path]:
    """The stand-in's site folder and IPython folder, and its kernel spec."""
    site = work / "site"
    shutil.copytree(
        SITE, site, ignore=shutil.ignore_patterns("__pycache__", "*.py[co]")
    )
    startup = work / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    shutil.move(site / "ipython_startup.py", startup / "00-colab-stand-in.py")
    spec = work / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"})
    )
    return site, work / "ipython"


def kernel_env(
    python: Path, wheels: Path, site: Path, ipython: Path, source: str, log: Path
) -> dict[str, str]:
    """The kernel's environment: Colab's packages, offline pip, no repository."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV", "CONDA", "JUPYTER"))
    }
    env |= {
        "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(site),  # the network guard and google.colab
        "IPYTHONDIR": str(ipython),
        "MPLCONFIGDIR": str(cache_dir() / "matplotlib"),
        "OMP_NUM_THREADS": "1",
        "RHN_SOURCE": source,
        "RHN_OFFLINE_LOG": str(log),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_CONFIG_FILE": os.devnull,  # no index or links from this machine
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONNOUSERSITE": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",  # ipykernel 6's debugger note
    }
    return env


def run_chapter(
    notebook: Path, python: Path, env: dict[str, str], out: Path, work: Path
) -> tuple[float, str | None, Any]:
    """Execute one chapter alone; returns (seconds, error or None, notebook)."""
    import nbclient
    import nbformat

    alone = work / notebook.stem
    alone.mkdir()
    shutil.copy(notebook, alone / notebook.name)
    nb = nbformat.read(alone / notebook.name, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=900,
        kernel_name=KERNEL,
        resources={"metadata": {"path": str(alone)}},
    )
    start = time.perf_counter()
    error = None
    try:
        client.execute(env=env)  # in the notebook's folder (resources' path)
    except nbclient.exceptions.CellExecutionError as exc:
        error = f"{exc.ename}: {exc.evalue}".splitlines()[0][:300]
    except Exception as exc:  # a dead kernel, a timeout
        error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    seconds = time.perf_counter() - start
    nbformat.write(nb, out / notebook.name)
    return seconds, error, nb


def check_widgets(nb: Any, calls: Path) -> list[str]:
    """Widgets as Colab shows them: its widget manager on, no PNG fallback."""
    view = "application/vnd.jupyter.widget-view+json"
    shown = [
        o
        for cell in nb.cells
        for o in cell.get("outputs", [])
        if view in o.get("data", {})
    ]
    problems = []
    if any("image/png" in o["data"] for o in shown):
        problems.append("a widget's output carries a PNG in Colab")
    made = calls.is_file() and "enable_custom_widget_manager" in calls.read_text()
    if shown and not made:
        problems.append("widgets shown without Colab's custom widget manager")
    calls.unlink(missing_ok=True)
    return problems


def check_after(python: Path, before: dict[str, str], log: Path) -> list[str]:
    """What went wrong around a chapter, besides its cells (empty if nothing)."""
    problems = []
    after = installed(python)
    changed = sorted(n for n, v in before.items() if after.get(n) != v)
    if changed:
        problems.append(
            "changed "
            + ", ".join(
                f"{n} {before[n]} -> {after.get(n, 'removed')}" for n in changed
            )
        )
    if "rhn" not in after:
        problems.append("rhn was not installed")
    else:
        shown = _run([str(python), "-m", "pip", "show", "rhn"]).stdout
        if "Editable project location" in shown:
            problems.append("rhn was installed in place, not from a build")
    if log.is_file() and log.read_text().strip():
        problems.append("network use: " + log.read_text().strip().replace("\n", "; "))
        log.unlink()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--chapters", nargs="*", default=None, help="chapter numbers (default: all)"
    )
    parser.add_argument(
        "--out", default=str(ROOT / "test-output" / "colab"), help="executed notebooks"
    )
    args = parser.parse_args(argv)
    chapters = sorted((ROOT / "book").glob("[0-9][0-9]*.ipynb"))
    if args.chapters:
        wanted = {f"{int(c):02d}" for c in args.chapters}
        chapters = [c for c in chapters if c.name[:2] in wanted]
        if {c.name[:2] for c in chapters} != wanted:  # one number, one chapter file
            print(
                f"colab: error: no chapter for some of {args.chapters}", file=sys.stderr
            )
            return 2
    total = time.perf_counter()
    python, wheels = environment(cache_dir())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="rhn-colab-") as tmp:
        work = Path(tmp)
        clone = work / "clone"
        clone.mkdir()
        source = snapshot(clone)
        site, ipython = kernel_setup(work, python)
        os.environ["JUPYTER_PATH"] = str(work / "jupyter")  # finds the kernel spec
        log, calls = work / "network.log", work / "colab-calls.log"
        env = kernel_env(python, wheels, site, ipython, source, log)
        env["RHN_COLAB_CALLS"] = str(calls)
        _run([str(python), "-m", "pip", "uninstall", "-q", "-y", "rhn"])
        before = installed(python)
        versions = ", ".join(f"{n} {before[n]}" for n in COLAB)
        print(
            f"Colab stand-in: Python {sys.version.split()[0]}, {versions}", flush=True
        )
        for notebook in chapters:
            seconds, error, nb = run_chapter(notebook, python, env, out, work)
            problems = [error] if error else []
            problems += check_widgets(nb, calls) + check_after(python, before, log)
            _run([str(python), "-m", "pip", "uninstall", "-q", "-y", "rhn"])
            status = "ok" if not problems else "FAILED: " + " | ".join(problems)
            failures += bool(problems)
            print(f"{notebook.name:28s} {seconds:6.0f} s  {status}", flush=True)
    passed = len(chapters) - failures
    print(
        f"{passed} of {len(chapters)} chapters ran alone and offline in the Colab "
        f"stand-in ({time.perf_counter() - total:.0f} s)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
