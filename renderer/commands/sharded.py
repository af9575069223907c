"""What a shard's ``-o json`` report adds (``--shard K/N``), for ``cozy-render merge``.

The sharded commands (check, render --out, ls, doctor, diff --base) print their usual JSON document
with a ``shard`` section last: which shard of which command, the options every shard must share, and
the clusters it ran with their names, which is what ``renderer.commands.merge`` needs to rebuild the
one run's report.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING, NamedTuple, TextIO

from renderer import report

if TYPE_CHECKING:
    from renderer.shard import Shard as Part


def section(shard: Part, command: str, request: NamedTuple, clusters: Iterable[tuple[PurePath, str]],
            ignored: Iterable[str] = ()) -> dict[str, object]:
    """What a shard's ``-o json`` report adds for ``merge`` (under ``shard``): which shard of which
    command, the options that must agree across shards (every request field but ``ignored`` and those
    that only say how or where this runner works), and the clusters it ran, in order, with their names."""
    from renderer import shard as sharding

    skipped = {"fmt", "output", "jobs", "concurrency", "shard", "color", *ignored}
    options = {name: str(value) if isinstance(value, PurePath) else list(value) if isinstance(value, tuple) else value
               for name, value in request._asdict().items() if name not in skipped}
    return {"index": shard.k, "count": shard.n, "command": command, "options": options,
            "clusters": [{"path": sharding.key(path), "name": name} for path, name in clusters]}


def with_section(document: str, part: dict[str, object]) -> str:
    """A JSON report (as the command's reporter wrote it) with the shard's ``part`` added last."""
    import json

    from renderer.escape import json_text

    data = json.loads(document)
    data["shard"] = part
    return json_text(data, indent=2, ensure_ascii=False) + "\n"


def show_json(subject: str, payload: object, part: dict[str, object], stdout: TextIO | None = None) -> None:
    """``report.show(subject, "json", payload)`` with the shard's section added to the document."""
    import io
    import sys

    document = io.StringIO()
    report.show(subject, "json", payload, report.Streams(document, sys.stderr))
    (stdout or sys.stdout).write(with_section(document.getvalue(), part))
