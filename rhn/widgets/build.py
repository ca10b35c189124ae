"""Bundle the widgets' ES modules: ``python -m rhn.widgets.build [--check]``.

Runs esbuild (the version pinned in the repository's ``package.json``,
installed by ``npm ci`` into ``node_modules``) on ``js/index.js`` and writes
``static/widget.js``, one minified ES module with ml-matrix inside, and on
``js/playground.js`` for ``static/playground.js``, the training playground
(:mod:`rhn.widgets.playground`). The playground trains in a Web Worker:
``js/playground_worker.js`` is bundled first, on its own (an IIFE), and its
code goes into ``static/playground.js`` as the string ``RHN_PLAYGROUND_WORKER``
(esbuild's ``--define``), from which the page makes the worker with a
``blob:`` URL; one file, nothing to fetch. The bundles are
committed, because Colab and ``pip install`` take the package from the
repository without running npm; ``tests/test_widgets.py`` and
``tests/test_playground.py`` rebuild them and check that the committed files
are byte for byte the same.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "js" / "index.js"
BUNDLE = HERE / "static" / "widget.js"
PLAYGROUND_SOURCE = HERE / "js" / "playground.js"
PLAYGROUND_BUNDLE = HERE / "static" / "playground.js"
WORKER_SOURCE = HERE / "js" / "playground_worker.js"
WORKER_NAME = "RHN_PLAYGROUND_WORKER"  # the string in playground.js
# Linux takes a command-line argument of up to 128 KiB
MAX_DEFINE_BYTES = 120_000
ENTRIES = {SOURCE: BUNDLE, PLAYGROUND_SOURCE: PLAYGROUND_BUNDLE}
REPO = HERE.parents[1]
ESBUILD = REPO / "node_modules" / ".bin" / "esbuild"

# every flag fixed, so that the same sources give the same bytes
FLAGS = [
    "--bundle",
    "--format=esm",
    "--platform=browser",
    "--target=es2020",
    "--minify",
    "--legal-comments=none",
    "--charset=utf8",
    "--log-level=warning",
]


def worker_code(esbuild: Path = ESBUILD) -> str:
    """The playground's worker (``js/playground_worker.js``) bundled as one
    minified script (an IIFE, as a classic worker runs it).

    Raises:
        FileNotFoundError: esbuild is not installed (run ``npm ci``).
        subprocess.CalledProcessError: esbuild failed.
    """
    _check_esbuild(esbuild)
    flags = [f for f in FLAGS if not f.startswith("--format=")]
    done = subprocess.run(
        [str(esbuild), str(WORKER_SOURCE.relative_to(REPO)), *flags, "--format=iife"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    return done.stdout


def _check_esbuild(esbuild: Path) -> None:
    if not Path(esbuild).is_file():
        raise FileNotFoundError(
            f"{esbuild} is missing: run `npm ci` in the repository root"
        )


def build(
    outfile: Path = BUNDLE, esbuild: Path = ESBUILD, source: Path = SOURCE
) -> Path:
    """Bundle ``source`` (default ``js/index.js``) into ``outfile`` with esbuild;
    returns ``outfile``. The playground's bundle gets the worker's code
    (:func:`worker_code`) as the string ``RHN_PLAYGROUND_WORKER``.

    Raises:
        FileNotFoundError: esbuild is not installed (run ``npm ci``).
        subprocess.CalledProcessError: esbuild failed.
    """
    _check_esbuild(esbuild)
    outfile = Path(outfile)
    outfile.parent.mkdir(parents=True, exist_ok=True)
    defines = []
    if Path(source).resolve() == PLAYGROUND_SOURCE:
        define = f"--define:{WORKER_NAME}={json.dumps(worker_code(esbuild))}"
        if len(define.encode()) > MAX_DEFINE_BYTES:
            raise RuntimeError(
                f"the worker's bundle must stay under {MAX_DEFINE_BYTES} bytes "
                f"to pass as an argument, got {len(define.encode())}"
            )
        defines.append(define)
    # relative paths: esbuild writes them into nothing, but keep the call
    # independent of where the repository lives
    subprocess.run(
        [
            str(esbuild),
            str(Path(source).relative_to(REPO)),
            *FLAGS,
            *defines,
            f"--outfile={outfile}",
        ],
        cwd=REPO,
        check=True,
    )
    return outfile


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="build into a temporary file and fail if it differs from the bundle",
    )
    args = parser.parse_args(argv)
    if not args.check:
        for source, bundle in ENTRIES.items():
            print(f"wrote {build(bundle, source=source)}")
        return 0
    import tempfile

    stale = 0
    for source, bundle in ENTRIES.items():
        with tempfile.TemporaryDirectory() as tmp:
            fresh = build(Path(tmp) / bundle.name, source=source).read_bytes()
        if not bundle.is_file() or fresh != bundle.read_bytes():
            print(
                f"{bundle} is stale: run python -m rhn.widgets.build", file=sys.stderr
            )
            stale = 1
        else:
            print(f"{bundle} is up to date")
    return stale


if __name__ == "__main__":
    sys.exit(main())
