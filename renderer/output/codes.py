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
         "SECURITY.md, What is defended, and how (`--out` destroying data)"),
    Code("OUT-OWNED", ERROR, "--out would replace a non-empty folder cozy-render did not write",
         "cozy-render replaces only folders carrying its mark file .cozy-render. Move the folder's files away, "
         "or empty it, and render again.",
         "README, Output folders (--out owns only what it writes)"),
    Code("OUT-BUSY", ERROR, "another cozy-render is writing the same folder",
         "Writers of one folder serialise on a lock on the folder holding the targets (flock, which also holds "
         "across containers and PID namespaces). This one waited 60 s for the other to finish. Run again once "
         "it has.",
         "SECURITY.md, What is defended, and how (concurrent writers)"),
    Code("OUT-LINK", ERROR, "a committed --out folder holds a symlink, a special file, or an oversized file",
         "--check reads only regular files inside the folder, within the per-file and total size limits; a "
         "symlink is named, never followed (its target is never printed), so a pull request cannot make the "
         "check print another file. Replace it with the rendered file, or delete it and render again.",
         "SECURITY.md, What is defended, and how (committed output read back)"),
    Code("OUT-STREAM", ERROR, "stdout is closed or cannot take the output",
         "The output stream was closed before cozy-render started (>&-), or writing it failed: a full disk or "
         "/dev/full, a read-only file system, a quota. Nothing is reported as written. Give cozy-render a "
         "writable stdout, or --out DIR. A reader that closes a pipe early (| head) is not this error: the "
         "command finishes with its own exit code (diff 1 on differences).",
         "SECURITY.md, What is defended, and how (streams)"),
    Code("CLI-CWD", ERROR, "the working directory no longer exists",
         "The folder cozy-render was started in was deleted before it ran: paths in messages and the render "
         "cache key are relative to it. Change to an existing folder and run again.",
         "SECURITY.md, What is defended, and how (streams)"),
]
