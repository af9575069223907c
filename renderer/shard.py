"""``--shard K/N``: one runner of a CI matrix takes one part of a fleet.

A cluster belongs to shard ``sha256("clusters/NAME") mod N`` (plus one): its path inside the overlay
tree, hashed with a hash that does not depend on the machine, the order clusters are listed in or
``PYTHONHASHSEED``, so every runner of a matrix agrees, and adding or removing a cluster never moves
another one to a different shard. The path is taken inside the overlay tree, not the checkout, so
``check --all`` and ``diff --base --all`` put a cluster in the same shard wherever the tree sits.

``cozy-render merge`` (``renderer.commands.merge``) turns the shards' ``-o json`` reports back into
the report one run prints. Never prints or exits.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import hashlib
from collections.abc import Iterable
from pathlib import PurePath
from typing import NamedTuple, TypeVar

from renderer.codes import Code
from renderer.errors import ERROR, EXIT_USAGE, Finding, RenderError
from renderer.escape import literal

CODES = [
    Code("CLI-SHARD", ERROR, "--shard is not K/N with 1 <= K <= N, or is given without --all",
         "A CI matrix of N runners gives each `--shard K/N` (K from 1 to N: GitHub Actions' matrix index plus "
         "one, GitLab's CI_NODE_INDEX and CI_NODE_TOTAL). A shard is a part of a fleet, so it needs --all. "
         "A shard that holds no cluster is not an error: its report has no clusters.",
         "design: fleets over a CI matrix (README, Sharding a fleet)"),
    Code("CLI-MERGE", ERROR, "cozy-render merge was given reports that are not the shards of one run",
         "merge reads the `-o json` reports of the N shards of one command (`--shard 1/N` ... `--shard N/N`): "
         "each must be a JSON report written with --shard, all of the same command, output apiVersion and "
         "options, every shard exactly once and no cluster in two reports; the format asked for must be one "
         "the command prints.",
         "design: fleets over a CI matrix (README, Sharding a fleet)"),
]

T = TypeVar("T")


class Shard(NamedTuple):
    """Shard ``k`` of ``n`` (1-based, as CI matrices count)."""

    k: int
    n: int

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"

    def holds(self, key: str) -> bool:
        return shard_of(key, self.n) == self.k

    def holds_cluster(self, cluster: "PurePath | str") -> bool:
        """Whether the cluster (its folder, or the folder's name) is this shard's."""
        return self.holds(key(cluster))


def parse(text: str) -> Shard:
    """``K/N`` as the user wrote it; anything else is CLI-SHARD (exit 2)."""
    k, sep, n = text.strip().partition("/")
    if sep and k.isascii() and n.isascii() and k.isdigit() and n.isdigit():
        index, count = int(k), int(n)
        if 1 <= index <= count:
            return Shard(index, count)

    raise RenderError([Finding("CLI-SHARD", f"--shard {literal(text)}: give K/N with 1 <= K <= N "
                                            "(this runner's index and the number of runners)")], EXIT_USAGE)


def requested(text: str | None, all_clusters: bool) -> Shard | None:
    """The command line's ``--shard`` (None: the whole fleet); without ``--all`` a usage error."""
    if text is None:
        return None
    shard = parse(text)
    if not all_clusters:
        raise RenderError([Finding("CLI-SHARD", f"--shard {shard} takes a part of a fleet: give --all")],
                          EXIT_USAGE)
    return shard


def key(cluster: "PurePath | str") -> str:
    """What a cluster is hashed by: ``clusters/NAME``, its path inside the overlay tree."""
    return f"clusters/{PurePath(cluster).name}"


def shard_of(cluster_key: str, count: int) -> int:
    """The shard (1..count) of the cluster whose ``key`` is ``cluster_key``."""
    digest = hashlib.sha256(cluster_key.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def select(paths: Iterable[T], shard: Shard | None) -> list[T]:
    """The clusters of ``paths`` (cluster folders) that ``shard`` holds, in the order given."""
    if shard is None:
        return list(paths)
    return [p for p in paths if shard.holds(key(p))]  # type: ignore[arg-type]


def refusal(message: str) -> RenderError:
    """A usage error about ``--shard`` (CLI-SHARD, exit 2)."""
    return RenderError([Finding("CLI-SHARD", message)], EXIT_USAGE)
