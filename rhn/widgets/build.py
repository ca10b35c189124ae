"""Bundle the widgets' ES module: ``python -m rhn.widgets.build [--check]``.

Runs esbuild (the version pinned in the repository's ``package.json``,
installed by ``npm ci`` into ``node_modules``) on ``js/index.js`` and writes
``static/widget.js``, one minified ES module with ml-matrix inside. The bundle
is committed, because Colab and ``pip install`` take the package from the
repository without running npm; ``tests/test_widgets.py`` rebuilds it and
checks that the committed file is byte for byte the same.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "js" / "index.js"
BUNDLE = HERE / "static" / "widget.js"
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


def build(outfile: Path = BUNDLE, esbuild: Path = ESBUILD) -> Path:
    """Bundle ``js/index.js`` into ``outfile`` with esbuild; returns ``outfile``.

    Raises:
        FileNotFoundError: esbuild is not installed (run ``npm ci``).
        subprocess.CalledProcessError: esbuild failed.
    """
    if not Path(esbuild).is_file():
        raise FileNotFoundError(
            f"{esbuild} is missing: run `npm ci` in the repository root"
        )
    outfile = Path(outfile)
    outfile.parent.mkdir(parents=True, exist_ok=True)
    # relative paths: esbuild writes them into nothing, but keep the call
    # independent of where the repository lives
    subprocess.run(
        [str(esbuild), str(SOURCE.relative_to(REPO)), *FLAGS, f"--outfile={outfile}"],
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
        print(f"wrote {build()}")
        return 0
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        fresh = build(Path(tmp) / "widget.js").read_bytes()
    if fresh != BUNDLE.read_bytes():
        print(f"{BUNDLE} is stale: run python -m rhn.widgets.build", file=sys.stderr)
        return 1
    print(f"{BUNDLE} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
