"""Variant data: what each feature choice renders (YAML objects the features fill in), and the
Package catalogue.

The shipped folder is ``variants/`` (inside the wheel at ``renderer/variants``); ``--variants DIR``
points at a user folder whose files override the shipped ones of the same relative path. User files
are read like overlays: size, nesting and alias limits, and ``file:line:col`` in every error.

Parsing the shipped YAML on every render costs more than the rest of the render (the catalogue alone
takes ~25 ms through ruamel's constructor), so the shipped plain-YAML files are also kept parsed,
as JSON, in ``renderer/_generated/variants.json`` (``python -m renderer.generate``). The bundle
records each file's size and CRC-32; a shipped file whose bytes differ (an edit in a source checkout not yet
regenerated) is read from its YAML instead, so a render never serves stale variant data. User
``--variants`` files are always read from YAML.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from renderer.errors import Finding, Location, RenderError
from renderer.tree import copy_tree


def shipped_dir() -> Path:
    package = Path(__file__).resolve().parent.parent  # renderer/
    installed = package / "variants"  # a wheel maps variants/ to renderer/variants
    return installed if installed.is_dir() else package.parent / "variants"


class Variants:
    """The variant data of one render, read in full when the render starts (the load stage), so the
    stages after it only look data up: every shipped file (from the bundle, or from its YAML when
    it was edited since the bundle was generated), each replaced by the ``--variants`` file of the
    same relative path when there is one."""

    def __init__(self, override: Path | None = None) -> None:
        import os

        self.override = Path(os.path.realpath(override)) if override else None
        self.shipped = shipped_dir()
        self._files: dict[str, list[Any]] = {}
        users = _override_files(override) if override else {}
        for relpath, bundled in bundle_index().items():
            user = users.get(relpath)
            shipped = self.shipped / relpath
            if user is not None:
                self._files[relpath] = _load(str(user))
                _refuse_other_shape(self._files[relpath], bundled["documents"], user)
            elif not shipped.is_file():
                continue  # removed since the bundle was generated: never served from the bundle
            elif _matches_bundle(shipped, bundled["digest"]):
                self._files[relpath] = bundled["documents"]
            else:
                self._files[relpath] = _load(str(shipped))

    def load(self, relpath: str) -> list[dict[str, Any]]:
        """All YAML documents of a variant file (a copy the caller may change)."""
        return [copy_tree(d) for d in self._documents(relpath)]

    def catalogue(self) -> dict[str, Any]:
        catalogue: dict[str, Any] = self._documents("catalogue.yaml")[0]
        return catalogue

    def _documents(self, relpath: str) -> list[Any]:
        documents = self._files.get(relpath)
        if documents is None:
            raise RenderError([Finding("OVL-VARIANTS", f"variant file {relpath} is not in the variants bundle "
                                                       "(a new shipped file? run `python -m renderer.generate`)")])
        return documents


def _override_files(override: Path) -> dict[str, Path]:
    """The ``--variants`` files that override a shipped one, by relative path, listed through
    ``renderer.walk`` (issue 34 item 2): only the shipped files' paths and their folders are looked at;
    a link out of the folder, a link loop, a FIFO, or a folder that cannot be listed (itself a loop, a
    file) is refused with OVL-VARIANTS naming it, before anything is read."""
    import os

    from renderer import walk
    from renderer.load import limits
    from renderer.load.yamlio import display_path

    if not os.path.lexists(override):
        return {}  # no folder there: nothing overrides (a preview's base side may predate the folder)
    wanted = set(bundle_index())
    folders = {rel.rsplit("/", i)[0] for rel in wanted for i in range(1, rel.count("/") + 1)}
    budget = walk.Budget(files=len(wanted), bytes=limits.MAX_INPUT_BYTES, depth=limits.MAX_DEPTH)
    try:
        listed = walk.files(override, budget, keep=lambda rel: rel in wanted or rel in folders)
    except walk.WalkRefused as refused:
        where = override if refused.rel in ("", ".") else override / refused.rel
        raise RenderError([Finding("OVL-VARIANTS", f"--variants: {'the folder' if where == override else 'this entry'} "
                                                   f"{refused.message}", Location(display_path(where)))]) from None
    return {item.rel: Path(item.real) for item in listed}


def _shape(value: Any) -> str:
    return "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else "a value"


def _refuse_other_shape(user: list[Any], shipped: list[Any], path: Path, depth: int = 3) -> None:
    """A ``--variants`` file must have the shipped file's shape (document count, the catalogue's top-level keys;
    down to ``depth`` levels a mapping where the shipped one has a mapping, a list where it has a list), so
    the features that read it never meet a list where they index a key (issue 25 item 8: exit 4)."""
    from renderer.escape import quote
    from renderer.load.yamlio import display_path

    def refuse(what: str) -> RenderError:
        return RenderError([Finding("OVL-VARIANTS", f"{quote(display_path(path))} overrides a shipped variant "
                                                    f"file with another shape: {what}",
                                    Location(display_path(path), 1, 1))])

    if len(user) != len(shipped):
        raise refuse(f"{len(user)} documents where the shipped file has {len(shipped)}")

    def compare(mine: Any, theirs: Any, where: str, left: int) -> None:
        if isinstance(theirs, (dict, list)) and _shape(mine) != _shape(theirs):
            raise refuse(f"{where or 'the document'} is {_shape(mine)}, not {_shape(theirs)}")
        if left and isinstance(theirs, dict):
            for key, value in theirs.items():
                if key not in mine:
                    if not where and path.name == "catalogue.yaml":  # every render indexes its top-level keys
                        raise refuse(f"{key} is missing")
                    continue
                compare(mine[key], value, f"{where + '.' if where else ''}{key}", left - 1)

    for mine, theirs in zip(user, shipped, strict=True):
        compare(mine, theirs, "", depth)


BUNDLE = Path(__file__).resolve().parent.parent / "_generated" / "variants.json"


@lru_cache(maxsize=1)
def bundle_index() -> dict[str, dict[str, Any]]:
    """The shipped variant files (relative to ``variants/``) and their digests, from the bundle index."""
    import json

    try:
        return json.loads(BUNDLE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def _digest(path: Path) -> str:
    """Size and CRC-32 of a shipped file: enough to notice an edit, and no hashlib (OpenSSL) import,
    which would cost every render a few milliseconds."""
    import zlib

    data = path.read_bytes()
    return f"{len(data)}:{zlib.crc32(data):08x}"


# Shipped files whose digest matched the bundle in this process: path -> (inode, size, mtime, ctime).
_verified: dict[Path, tuple[int, int, int, int]] = {}
# A file changed less than this before it was hashed may change again within the same timestamp
# tick, leaving its stat as it was; such a file is hashed on every render (git's "racy clean" rule).
_RACY_NS = 2_000_000_000


def _matches_bundle(path: Path, digest: str) -> bool:
    """Whether a shipped file still holds the bytes the bundle was generated from.

    Hashed once per process (a fleet render builds ``Variants`` once per cluster); later renders
    trust it while its inode, size, mtime and ctime are unchanged. Any write changes mtime and
    ctime (ctime even when mtime is set back), so an edit during the run is hashed again.
    """
    import os
    import time

    st = os.stat(path)
    signature = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if _verified.get(path) == signature:
        return True
    _verified.pop(path, None)
    if _digest(path) != digest:
        return False
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _RACY_NS:
        _verified[path] = signature
    return True


def bundle_source() -> str:
    """What ``_generated/variants.json`` holds: every shipped variant file, parsed, with its digest."""
    import json

    shipped = shipped_dir()
    files = sorted(p for p in shipped.rglob("*.yaml") if p.is_file())
    data = {p.relative_to(shipped).as_posix(): {"digest": _digest(p), "documents": _load.__wrapped__(str(p))}
            for p in files}
    return json.dumps(data, indent=None, separators=(",", ":")) + "\n"  # key order is output order


@lru_cache(maxsize=256)
def _load(path: str) -> list[Any]:
    from renderer.load.yamlio import display_path, load_documents, read_text

    display = display_path(Path(path))
    return [data for data, _ in load_documents(read_text(Path(path), display), display)]
