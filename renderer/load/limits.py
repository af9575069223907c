"""The one work budget of a render, and every fixed limit on input (SECURITY.md lists them all).

cozy-render runs on whatever a Git repository holds, inside a repo-server shared with other
tenants. Each limit is checked *before* the work it bounds is done: file sizes before reading,
document counts and nesting on the flat event stream before a node graph is built, nodes while they
are built (aliases and ``<<`` merges counted every time they are expanded), template output before
it is kept, template steps while the template runs, allocating filters before they allocate.

A render starts a fresh :class:`Budget` (``renderer.load.overlay.load_overlay`` does) and everything that
loads or templates during that render charges the same one, across every layer, manifest file and
document. Refusals are ``OVL-LIMIT`` at the place the budget ran out.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

# Per file.
MAX_FILE_BYTES = 4 * 1024 * 1024
# Per render: all files together (layers and manifests).
MAX_INPUT_BYTES = 16 * 1024 * 1024
MAX_FILES = 1_000
# Per render: plain-data nodes after alias and merge-key expansion, across every document and file.
# Stops "billion laughs" alias bombs and nested `<<` merges, which are tiny on disk.
MAX_NODES = 200_000
# Nesting, counted on the event stream (libyaml's composer recurses in C per level) and again on the
# expanded data (an alias chain is flat in the stream but deep once expanded; the emitter recurses).
MAX_DEPTH = 100
# Documents in one manifests file (an overlay layer holds exactly one).
MAX_DOCUMENTS = 1_000
# inherits: how many layers may be stacked on a cluster file.
MAX_INHERITS_DEPTH = 64
# Integers: what Kubernetes (int64) and JSON consumers can hold.
INT_MIN, INT_MAX = -(2**63), 2**64 - 1
# Templates, per render: characters of template output kept, and interpreter steps (lines executed
# inside Jinja2, deterministic, unlike a clock; a million steps is about a second here).
MAX_TEMPLATE_OUTPUT = 1_000_000
MAX_TEMPLATE_STEPS = 1_000_000
# Templates: extra address space a template may allocate beyond what the process already holds
# (Linux RLIMIT_AS, lowered around each Jinja2 render and restored after).
TEMPLATE_MEMORY_BYTES = 256 * 1024 * 1024
# Templates: the largest integer a template may compute, in bits (9**999 is about 3,200 bits; 14,000
# bits stay under Python's 4,300-digit str() limit).
MAX_TEMPLATE_INT_BITS = 14_000
# ARGOCD_APP_PARAMETERS: nesting and size.
MAX_PARAMETERS_DEPTH = 16
MAX_PARAMETERS_BYTES = 64 * 1024  # Linux caps one environment string at 128 KiB
# Paths named in inherits/manifests: bytes per name (Linux NAME_MAX and PATH_MAX).
MAX_PATH_COMPONENT = 255
MAX_PATH_LENGTH = 4096


class Budget:
    """What is left of one render's budget."""

    def __init__(self) -> None:
        self.nodes = MAX_NODES
        self.input_bytes = MAX_INPUT_BYTES
        self.files = MAX_FILES
        self.template_output = MAX_TEMPLATE_OUTPUT
        self.template_steps = MAX_TEMPLATE_STEPS


# The running render's budget, scoped to the context (each thread starts without one) rather than a
# module global. Not an explicit parameter: every reader charges it (read_text, load_documents, the
# templater), and they are called from every stage and command, so threading a budget through would
# touch each of those call chains for no gain in what a render may do. `contextvars` costs start-up
# nothing: renderer.load.yamlio imports it anyway (display_relative_to).
_CURRENT: ContextVar[Budget | None] = ContextVar("render_budget", default=None)


def start() -> Budget:
    """A fresh budget for the render that begins now (in this context, until the next render starts)."""
    budget = Budget()
    _CURRENT.set(budget)
    return budget


def current() -> Budget:
    """The running render's budget; outside a render (a unit test loading one file), a fresh one."""
    budget = _CURRENT.get()
    return Budget() if budget is None else budget


class rereading:
    """A budget of its own for reading again what a finished render already accepted (explain --rendered
    and --annotate re-read layers and the render's own output stream): that work is bounded by the render
    that accepted it, and must not be charged to (and refused by) the budget that render spent (issue 25
    item 3). ``nodes`` lets the re-read of the output stream, which may hold more nodes than an input may,
    count against its own size instead."""

    def __init__(self, nodes: int = MAX_NODES) -> None:
        self.budget = Budget()
        self.budget.nodes = max(nodes, MAX_NODES)
        self.budget.input_bytes = max(self.budget.input_bytes, nodes)
        self.token: Token[Budget | None] | None = None

    def __enter__(self) -> Budget:
        self.token = _CURRENT.set(self.budget)
        return self.budget

    def __exit__(self, *_exc: object) -> None:
        if self.token is not None:
            _CURRENT.reset(self.token)
            self.token = None


# diff --snapshot / --against (kubectl get output, or a committed `render --out` folder; pull-request
# input). A 10,000-object dump is about 20 MB of YAML; these bound a hostile one before it is parsed.
MAX_SNAPSHOT_FILE_BYTES = 64 * 1024 * 1024
MAX_SNAPSHOT_BYTES = 128 * 1024 * 1024  # all files of one --snapshot/--against source
MAX_SNAPSHOT_FILES = 10_000
MAX_SNAPSHOT_NODES = 5_000_000  # maps, lists and scalars after parsing, across every file
# diff against an API server: the largest response body read (a list page, a get, a dry-run answer),
# decompressed, and the most pages one list may take (`continue`).
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
MAX_LIST_PAGES = 100
