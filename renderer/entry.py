"""Console entry point.

Argo CD runs ``cozy-render cmp generate`` once per Application per refresh, and CI runs
``cozy-render render PATH`` per cluster, so their start-up is paid thousands of times a day.
Exactly those two argument vectors, with no options, run the same command bodies as the Click
commands (``renderer.app``) without importing Click (~30 ms here). Anything else, including
``--help``, options, or a path that does not exist (Click's usage error), goes through Click.
"""

from __future__ import annotations

import os
import sys


def _fast(argv: list[str]):
    if argv == ["cmp", "generate"]:
        target = "."
    elif len(argv) == 2 and argv[0] == "render" and not argv[1].startswith("-") and os.path.exists(argv[1]):
        target = argv[1]
    else:
        return None
    from pathlib import Path

    from renderer import app

    if argv[0] == "cmp":
        return lambda: app.cmp_generate(Path(target))
    return lambda: app.render_command(Path(target))


def main() -> None:
    body = _fast(sys.argv[1:])
    if body is not None:
        from renderer.app import execute

        execute(body)
    from renderer.cli import main as click_main

    click_main()


if __name__ == "__main__":  # pragma: no cover
    main()
