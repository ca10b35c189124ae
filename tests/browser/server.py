"""A static file server for the built book, on 127.0.0.1 only.

``python -m tests.browser.server [DIR] [--port N]`` serves ``DIR`` (default
``_build/html``) for a person to look at; the browser tests start it in a
thread with :func:`serve`.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # one line per request would bury the test output


@contextlib.contextmanager
def serve(directory: Path, port: int = 0) -> Iterator[str]:
    """Serve ``directory`` on ``127.0.0.1``; yields the base URL (ends with /)."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", nargs="?", default="_build/html")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    with serve(Path(args.directory), args.port) as url:
        print(f"serving {args.directory} at {url} (Ctrl-C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
