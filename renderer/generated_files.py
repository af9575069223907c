"""Writing and checking generated files: what ``python -m renderer.generate`` and the schema build share."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent  # the source tree, when renderer/ is one's

Files = dict[Path, bytes]
Owned = Iterable[tuple[Path, str]]  # (folder, glob): generated files there that are not expected are stale


def in_source_tree(root: Path = CHECKOUT) -> bool:
    """Whether ``root`` is a source tree the generators may rewrite (a checkout or an unpacked sdist: the
    pyproject.toml that builds cozy-render beside renderer/ and variants/). An installed package has
    neither beside it, and its parent is site-packages."""
    project = root / "pyproject.toml"
    return ((root / "variants").is_dir() and project.is_file()
            and 'name = "cozy-render"' in project.read_text(encoding="utf-8"))


def refusal(command: str, root: Path = CHECKOUT) -> str | None:
    """The one-line error a maintainer tool prints instead of writing into an installed package
    (issue 31: installed, ``python -m renderer.generate`` took site-packages for the checkout)."""
    if in_source_tree(root):
        return None
    return (f"{command}: error: {root / 'renderer'} is an installed package, not a cozy-render source checkout; "
            "run this in a checkout")


def _shown(path: Path, base: Path) -> str:
    return os.path.relpath(path, base)


def stale_files(files: Files, owned: Owned, base: Path = CHECKOUT) -> list[str]:
    """Expected files that are missing or differ, and owned generated files nothing generates any more."""
    problems = [_shown(p, base) for p, data in sorted(files.items()) if not p.exists() or p.read_bytes() != data]
    for folder, pattern in owned:
        problems += [f"{_shown(p, base)} (not generated any more)" for p in sorted(folder.glob(pattern))
                     if p not in files]
    return problems


def write_files(files: Files, owned: Owned) -> list[str]:
    written = []
    for path, data in sorted(files.items()):
        if path.exists() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(_shown(path, CHECKOUT))
    for folder, pattern in owned:
        for p in folder.glob(pattern):
            if p not in files:
                p.unlink()
                written.append(_shown(p, CHECKOUT))
    return written
