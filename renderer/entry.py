"""Console entry point.

Argo CD runs ``cozy-render cmp generate`` once per Application per refresh, and CI runs
``cozy-render render PATH`` per cluster, so their start-up is paid thousands of times a day.
Exactly those two argument vectors, with no options, build the same request objects the Click
commands build (``renderer.requests``, where the defaults live) and run the same command bodies,
without importing Click (~30 ms here). Anything else, including ``--help``, options, or a PATH that
does not exist (Click reports that as a usage error), goes through Click.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def fast_path(argv: list[str]) -> Callable[[], int] | None:
    """The command body for ``argv`` when it is one of the two hot argument vectors, else None."""
    from pathlib import Path

    if argv == ["cmp", "generate"]:
        from renderer.commands import cmp
        from renderer.requests import CmpGenerateRequest

        cmp_request = CmpGenerateRequest.from_environment(Path("."))
        return lambda: cmp.generate(cmp_request)
    if len(argv) == 2 and argv[0] == "render" and not argv[1].startswith("-") and os.path.exists(argv[1]):
        from renderer.commands import render
        from renderer.requests import RenderRequest

        render_request = RenderRequest(Path(argv[1]))
        return lambda: render.run(render_request)
    return None


def main() -> None:
    body = fast_path(sys.argv[1:])
    if body is not None:
        from renderer.runner import execute

        execute(body)
    from renderer.cli import main as click_main

    click_main()


if __name__ == "__main__":  # pragma: no cover
    main()
