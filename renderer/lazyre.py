"""Regular expressions compiled on first use (issue 24 item 1).

A render uses a few of the project's ~40 patterns; compiling every one when its module is imported
cost ~14 ms of each start-up, which Argo CD pays on every refresh. ``lazy(pattern)`` stands in for
``re.compile(pattern)`` and compiles on the first call of any of its methods; the compiled pattern's
bound methods are then kept on the instance, so later calls cost a plain attribute lookup.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled when first used; it offers the same methods."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern, self.flags)  # re's own cache: one compile per process

    def __getattr__(self, name: str) -> Any:  # only for what the instance does not hold yet: match, sub, ...
        value = getattr(self.compiled(), name)
        self.__dict__[name] = value
        return value


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
