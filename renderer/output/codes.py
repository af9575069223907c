"""The codes ``render --out`` prints (renderer/output/__init__.py), kept apart so writing a stream to stdout
does not import the code registry."""

from __future__ import annotations

from renderer.codes import Code
from renderer.errors import ERROR

CODES: list[Code] = [
    Code("OUT-UNSAFE", ERROR, "--out would overwrite the overlay repository's inputs, or is a filesystem root",
         "An --out folder is replaced whole. It may not be, contain, or sit inside a folder the render read "
         "(the cluster folder, base layers, manifests, .git), nor be a filesystem root. Write to a folder of "
         "its own, such as rendered/ beside clusters/.",
         "SECURITY.md, --out never destroys inputs (issue 12)"),
    Code("OUT-OWNED", ERROR, "--out would replace a non-empty folder cozy-render did not write",
         "cozy-render replaces only folders carrying its mark file .cozy-render. Move the folder's files away, "
         "or empty it, and render again.",
         "README, Output folders (issue 11, Flux: --out owns only what it writes)"),
]
