"""Shell completion: the ``completion`` command's scripts, cluster folders for PATH and rule IDs for
``rules``. Completion runs cozy-render itself (Click's ``_COZY_RENDER_COMPLETE`` protocol), so these
helpers stay cheap: a directory listing, the registry."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SHELLS = ("bash", "zsh", "fish")
PROG_NAME = "cozy-render"
COMPLETE_VAR = "_COZY_RENDER_COMPLETE"

INSTALL = {
    "bash": 'eval "$(cozy-render completion bash)"   # in ~/.bashrc',
    "zsh": 'eval "$(cozy-render completion zsh)"    # in ~/.zshrc',
    "fish": "cozy-render completion fish > ~/.config/fish/completions/cozy-render.fish",
}


def script(shell: str, command: Any) -> str:
    """The completion script Click generates for ``shell`` and the root ``command`` (the CLI group,
    passed in by the Click layer so this module never imports it)."""
    import click
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - the CLI offers only the shells Click supports
        raise click.BadParameter(f"no completion for {shell}")
    return cls(command, {}, PROG_NAME, COMPLETE_VAR).source() + "\n"


def cluster_folders(incomplete: str) -> list[Any]:
    """Folders under ``incomplete`` that hold a cluster.yaml, or lead to some (a tree, clusters/)."""
    from click.shell_completion import CompletionItem

    from renderer.escape import has_unsafe

    head, _, prefix = incomplete.rpartition("/")
    base = Path(head or ".") if head or not incomplete.startswith("/") else Path("/")
    try:
        # A name with a control character (a newline) would forge completion lines: never offered.
        children = sorted(p for p in base.iterdir() if p.is_dir() and p.name.startswith(prefix)
                          and not p.name.startswith(".") and not has_unsafe(p.name))
    except OSError:
        return []
    items = []
    for child in children:
        shown = f"{head}/{child.name}" if head else child.name
        if (child / "cluster.yaml").is_file():
            items.append(CompletionItem(shown, help="cluster"))
        elif _leads_to_clusters(child):
            items.append(CompletionItem(shown + os.sep, help="overlay tree"))
    return items


def _leads_to_clusters(folder: Path, depth: int = 2) -> bool:
    if depth == 0:
        return False
    try:
        subs = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError:
        return False
    return any((p / "cluster.yaml").is_file() or _leads_to_clusters(p, depth - 1) for p in subs)


def rule_ids(incomplete: str) -> list[Any]:
    from click.shell_completion import CompletionItem

    from renderer.registry import entries

    return [CompletionItem(entry.id, help=entry.summary) for entry in entries().values()
            if entry.id.lower().startswith(incomplete.lower())]
