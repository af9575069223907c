"""What a shard's ``-o json`` report adds (``--shard K/N``), for ``cozy-render merge``.

The sharded commands (check, render --out, ls, doctor, diff --base) print their usual JSON document
with a ``shard`` section last: which shard of which command, the options every shard must share, and
the clusters it ran with their names, which is what ``renderer.commands.merge`` needs to rebuild the
one run's report. It sits with the drivers (the preview writes a shard's review itself), below the
command layer, and prints only through the format registry (``renderer.formats``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from renderer import formats
from renderer import shard as sharding
from renderer.escape import json_text

if TYPE_CHECKING:
    from renderer.shard import Shard as Part


def section(shard: Part, command: str, request: NamedTuple, clusters: Iterable[tuple[PurePath | str, str]],
            ignored: Iterable[str] = ()) -> dict[str, object]:
    """What a shard's ``-o json`` report adds for ``merge`` (under ``shard``): which shard of which
    command, the options that must agree across shards (every request field but ``ignored`` and those
    that only say how or where this runner works), and the clusters it ran, in order, with their names."""
    skipped = {"fmt", "output", "jobs", "concurrency", "shard", *ignored}
    options = {name: str(value) if isinstance(value, PurePath) else list(value) if isinstance(value, tuple) else value
               for name, value in request._asdict().items() if name not in skipped}
    return {"index": shard.k, "count": shard.n, "command": command, "options": options,
            "clusters": [{"path": sharding.key(path), "name": name} for path, name in clusters]}


def with_section(document: str, part: dict[str, object]) -> str:
    """A JSON report (as the command's reporter wrote it) with the shard's ``part`` added last."""
    data = json.loads(document)
    data["shard"] = part
    return json_text(data, indent=2, ensure_ascii=False) + "\n"


def show_json(subject: str, payload: object, part: dict[str, object], stdout: TextIO | None = None) -> None:
    """``formats.show(subject, "json", payload)`` with the shard's section added to the document."""
    import io
    import sys

    document = io.StringIO()
    formats.show(subject, "json", payload, formats.Streams(document, sys.stderr))
    (stdout or sys.stdout).write(with_section(document.getvalue(), part))


# --- a lossless JSON form of a report's payload (the review of ``diff --base``) ---------------------
#
# NamedTuples, lists, tuples, dicts with any keys and paths, each marked so that it comes back as it
# was. Only the classes ``decode`` is given are rebuilt: a report is input, and names nothing else.


def encode(value: Any) -> Any:
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {"~": type(value).__name__, "v": [encode(v) for v in value]}
    if isinstance(value, tuple):
        return {"~tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"~dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, PurePath):
        return {"~path": str(value)}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot encode {type(value).__name__}")


def decode(value: Any, classes: dict[str, type]) -> Any:
    """``encode``'s value back; an unknown class or shape raises ValueError."""
    if isinstance(value, list):
        return [decode(v, classes) for v in value]
    if not isinstance(value, dict):
        return value
    if "~" in value:
        cls = classes.get(value["~"])
        if cls is None or not isinstance(value.get("v"), list):
            raise ValueError(f"an object of an unknown kind ({str(value['~'])[:40]!r})")
        return cls(*(decode(v, classes) for v in value["v"]))
    if "~tuple" in value:
        return tuple(decode(v, classes) for v in value["~tuple"])
    if "~dict" in value:
        return {_hashable(decode(k, classes)): decode(v, classes) for k, v in value["~dict"]}
    if "~path" in value:
        from pathlib import Path

        return Path(value["~path"])
    raise ValueError("an object of an unknown shape")


def _hashable(key: Any) -> Any:
    if isinstance(key, (list, dict)):
        raise ValueError("a mapping key that is not a value")
    return key
