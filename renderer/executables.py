"""Finding a program on PATH without importing ``shutil``.

``render PATH`` asks once whether kubeconform is installed (``--validator auto``); ``shutil.which``
would answer the same, but importing ``shutil`` pulls in ``bz2``, ``lzma`` and ``fnmatch``, about
3 ms of every cold render (issue 24). This is ``shutil.which`` for a bare program name on POSIX:
the first PATH entry holding an executable file of that name.
"""

from __future__ import annotations

import os
import stat


def on_path(name: str) -> str | None:
    """The path of the first executable regular file ``name`` in PATH's folders, else None."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or os.curdir, name)
        try:
            mode = os.stat(candidate).st_mode
        except (OSError, ValueError):  # missing, unreadable, or a NUL in PATH
            continue
        if stat.S_ISREG(mode) and os.access(candidate, os.X_OK):
            return candidate
    return None
