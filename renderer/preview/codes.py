"""Codes ``diff --base`` prints besides the live diff's (registered through ``renderer.codes.CODE_MODULES``)."""

from __future__ import annotations

from renderer.codes import Code
from renderer.errors import ERROR

CODES: list[Code] = [
    Code("DIFF-GIT", ERROR, "diff --base/--head could not read a revision from Git",
         "PATH is not inside a Git working tree, a revision names no commit (a shallow CI clone often lacks "
         "the base: fetch it, or clone with fetch-depth: 0), or git itself failed. Only read-only git "
         "commands run (rev-parse, ls-tree, cat-file, ls-files, with GIT_OPTIONAL_LOCKS=0): the checkout, "
         "index, stash and branches are never changed.",
         "README, Review a pull request; git rev-parse --verify, git cat-file --batch"),
]
