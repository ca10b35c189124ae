"""Local copies of the scripts that the built book loads from CDNs.

The book's pages load one script from a public CDN: MathJax (from the theme).
The scripts of the widgets (require.js, the widget manager, anywidget's
module) are the site's own (``_ext/widget_scripts.py``), so no rule here
serves them: a page that asked a CDN for them would fail the tests. The test
machine has no route to the CDN, so the browser tests answer MathJax requests
with the files of the npm package pinned in ``package.json`` (installed by
``npm ci`` into ``node_modules``).
:func:`local_file` maps a URL to its local file, or says why it cannot.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "node_modules"

# (pattern on the URL, npm package, folder inside the package); group "path" is
# the file inside that folder and group "version" (if any) the requested version
_RULES: list[tuple[re.Pattern[str], str, str]] = [
    (
        re.compile(r"^https://[^/]+/(?:npm/)?mathjax@(?P<version>[^/]+)/(?P<path>.+)$"),
        "mathjax",
        "",
    ),
]

CONTENT_TYPES = {
    ".js": "application/javascript",
    ".css": "text/css",
    ".json": "application/json",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".eot": "application/vnd.ms-fontobject",
    ".svg": "image/svg+xml",
    ".map": "application/json",
}


def installed_version(package: str) -> str:
    """The version of an npm package in ``node_modules``."""
    manifest = NODE_MODULES / package / "package.json"
    if not manifest.exists():
        raise FileNotFoundError(
            f"{manifest} is missing: run `npm ci` in the repository root"
        )
    return json.loads(manifest.read_text())["version"]


def _compatible(requested: str, installed: str) -> bool:
    """``mathjax@3`` accepts any 3.x; an exact version must match exactly."""
    parts = requested.split(".")
    return installed.split(".")[: len(parts)] == parts


def local_file(url: str) -> Path | None:
    """The local file that answers ``url``, or ``None`` if no rule matches.

    Raises:
        LookupError: a rule matches but the installed package has another
            version than the page asks for, or lacks the file.
    """
    url = url.split("?", 1)[0].split("#", 1)[0]
    for pattern, package, folder in _RULES:
        m = pattern.match(url)
        if not m:
            continue
        groups = m.groupdict()
        requested = groups.get("version") or groups.get("version2")
        installed = installed_version(package)
        if requested and not _compatible(requested, installed):
            raise LookupError(
                f"{url} asks for {package}@{requested} but node_modules has "
                f"{installed}: update package.json"
            )
        path = groups["path"]
        target = NODE_MODULES / package / folder / path
        if not target.is_file():
            raise LookupError(f"{url}: no file {target}")
        return target
    return None
