"""Shell completion: the ``completion`` command's scripts, cluster folders for PATH and rule IDs for
``rules``. Completion runs cozy-render itself (Click's ``_COZY_RENDER_COMPLETE`` protocol), so these
helpers stay cheap: a directory listing, the registry."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem, get_completion_class

from renderer.escape import has_unsafe
from renderer.registry import entries

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
    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - the CLI offers only the shells Click supports
        raise click.BadParameter(f"no completion for {shell}")
    source = cls(command, {}, PROG_NAME, COMPLETE_VAR).source()
    for unsafe, safe in HARDENED.get(shell, ()):
        source = source.replace(unsafe, safe)
    return source + "\n"


# Click's scripts treat a completion value as shell text (issue 34 items 5 and 20): bash expanded it
# as a glob twice (the unquoted `for completion in $response` and `COMPREPLY+=($value)`: a cluster
# folder named `*` offered every file there, and brought back names cluster_folders leaves out), read
# its backslashes as escapes, and put it on the command line unquoted (a folder named `$(cmd)` would
# run cmd once the line is run); fish cut a value at its first comma. Each is replaced by its quoted
# form; tests/commands/test_completion_hostile.py runs the bash script in a real bash. Click's bash
# script already needs bash 4.4 (`local -`). zsh's compadd quotes what it inserts (no -Q).
HARDENED: dict[str, list[tuple[str, str]]] = {
    "bash": [
        ("    local response\n", "    local response\n    local -\n    set -f  # no pathname expansion of any value\n"),
        ("IFS=',' read type value", "IFS=',' read -r type value"),
        ("            COMPREPLY+=($value)",
         "            compopt -o filenames  # bash quotes what it inserts\n            COMPREPLY+=(\"$value\")"),
    ],
    "fish": [('string split "," $completion', 'string split -m 1 "," -- $completion')],
}


def cluster_folders(incomplete: str) -> list[Any]:
    """Folders under ``incomplete`` that hold a cluster.yaml, or lead to some (a tree, clusters/)."""
    if has_unsafe(incomplete):  # what was typed comes back in every value: it must not forge a line either
        return []
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
    return [CompletionItem(entry.id, help=entry.summary) for entry in entries().values()
            if entry.id.lower().startswith(incomplete.lower())]
