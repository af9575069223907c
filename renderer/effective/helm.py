"""Render the platform chart with a real ``helm template``, values layered as the operator does.

The operator installs the platform release from PackageSource ``cozystack.cozystack-platform``,
whose variant ``valuesFiles`` are ``values.yaml`` then ``values-<variant>.yaml``; the platform
Package's ``spec.components.platform.values`` come last (reference/platform-chart/README.md,
``cmd/cozystack-operator/main.go installPlatformPackageSource``). So the child Packages a cluster
gets are what ``helm template cozystack-platform <chart> -n cozy-system -f values.yaml
-f values-<variant>.yaml -f <platform values>`` emits.

Offline, ``lookup`` returns nothing and repository.yaml would fail without its OCIRepository. The
release's templates are rendered from a scratch copy of the chart (``release_chart``): the bundles
and every template outside them (apps.yaml, scheduling.yaml, migration-hook.yaml, repository.yaml,
containerd-registry-secret.yaml, ...), with repository.yaml's lookup answered as the operator's
cluster answers it (``ANSWERED_LOOKUPS``); ``ASSUMED_ABSENT`` says what the other ``lookup`` calls
are taken to find (nothing). templates/sources.yaml is read from the chart folder instead.

Imported only by the chart choice (``--chart helm``/``auto``), ``effective``, the chart check and the tests:
never on a cold render's path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import AliasEvent, MappingStartEvent, ScalarEvent, SequenceStartEvent

from renderer import childproc, walk
from renderer.batch import scratch_held
from renderer.errors import fail
from renderer.escape import printable, quote
from renderer.tree import copy_tree
from renderer.walk import Budget

RELEASE = "cozystack-platform"
NAMESPACE = "cozy-system"
# Rendered offline: the bundles (every child Package) and their helpers. templates/sources.yaml only
# copies sources/*.yaml verbatim (`.Files.Get`), so PackageSources are read from the chart folder
# instead of parsed back out of helm's output (which would triple the cost of a run).
OFFLINE_TEMPLATES = ("_helpers.tpl", "bundles")
WITH_SOURCES = ("_helpers.tpl", "sources.yaml", "bundles")
# What an offline render cannot see, and so assumes absent (lookup returns nothing).
ASSUMED_ABSENT = (
    "ConfigMap cozy-system/cozystack (isp-full-generic: api-server-endpoint and ipv4 CIDRs come from "
    "publishing.apiServerEndpoint and networking.* instead)",
    "Package cozystack.ouroboros live (the proxyProtocol disable guard cannot fire)",
    "ConfigMaps kube-system/kube-root-ca.crt, cozy-system/cozystack-version (apps.yaml, cozystack-version.yaml, "
    "migration-hook.yaml: a first install); flux source cozy-system/cozystack-platform answered present "
    "(repository.yaml, ANSWERED_LOOKUPS); NOTES.txt not rendered (PackageSources are sources/*.yaml "
    "verbatim, read from the chart folder)",
)
# The operator's platform variants and their values files after values.yaml (main.go).
VARIANT_FILES = {
    "default": (),
    "isp-full": ("values-isp-full.yaml",),
    "isp-hosted": ("values-isp-hosted.yaml",),
    "isp-full-generic": ("values-isp-full-generic.yaml",),
}
# What works in any install (issue 31 item 5): no file of this repository, which an install does not have.
HELM_HINT = "install helm 3 or 4 (https://helm.sh/docs/intro/install/) or pass --helm PATH"


class ChartFailure(NamedTuple):
    """A failed ``helm template``: the chart's own message and where in the chart it stopped."""

    message: str  # a fail guard's text, or the Go template error after "template: <file>:<l>:<c>: "
    template: str  # e.g. templates/bundles/iaas.yaml ("" when helm said no more)
    line: int
    col: int
    raw: str  # helm's whole first error line, verbatim

    @property
    def where(self) -> str:
        return f"{self.template}:{self.line}:{self.col}" if self.template else "chart"


class ChartRender(NamedTuple):
    documents: list[dict[str, Any]]
    failure: ChartFailure | None

    def packages(self) -> dict[str, dict[str, Any]]:
        return {doc["metadata"]["name"]: doc for doc in self.documents if doc.get("kind") == "Package"}

    def sources(self) -> dict[str, dict[str, Any]]:
        """PackageSources in the output (only when sources.yaml was rendered: ``WITH_SOURCES``)."""
        return {doc["metadata"]["name"]: doc for doc in self.documents if doc.get("kind") == "PackageSource"}


def chart_sources(chart: Path) -> list[str]:
    """PackageSource names the chart ships (templates/sources.yaml emits sources/*.yaml as they are);
    read once per process while the files are unchanged (``effective --all`` asks once per cluster)."""
    try:  # one listing and one stat a file: ~100 files, asked once per cluster
        with os.scandir(chart / "sources") as entries:
            listed = sorted((entry.name, entry.path) for entry in entries
                            if entry.name.endswith(".yaml") and not entry.name.startswith("."))  # glob("*.yaml")
    except FileNotFoundError:
        listed = []
    if any(os.path.islink(path_text) or not os.path.isfile(path_text) for _, path_text in listed):
        chart_files(chart / "sources", lambda rel: rel.endswith(".yaml"))  # read here directly: held to the walk
    stats = [(name, os.stat(path)) for name, path in listed]
    key = (str(chart.resolve()), tuple((name, st.st_mtime_ns, st.st_size) for name, st in stats))
    if key not in _SOURCES:
        names = []
        for _, path_text in listed:
            path = Path(path_text)
            text = path.read_text(encoding="utf-8", errors="replace")
            if re.search(r"^kind: PackageSource$", text, re.M):
                found = re.search(r"^metadata:\n(?:  .*\n)*?  name: (\S+)", text, re.M)
                names.append(found.group(1) if found else path.stem)
        _SOURCES[key] = names
    return list(_SOURCES[key])


_SOURCES: dict[tuple[str, tuple[tuple[str, int, int], ...]], list[str]] = {}


def find_helm(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The helm to run: ``explicit`` when given (must exist), else ``helm`` on PATH, else None."""
    if explicit is not None:
        path = shutil.which(str(explicit))
        return path
    return shutil.which("helm")


def require_helm(explicit: str | os.PathLike[str] | None = None) -> str:
    """``find_helm`` or one PLT-HELM error line saying how to get one (exit 3)."""
    helm = find_helm(explicit)
    if helm is None:
        what = f"--helm {explicit} is not an executable" if explicit is not None else "no helm on PATH"
        raise fail("PLT-HELM", f"{what}: {HELM_HINT}")
    return helm


# A --platform-chart folder is read through renderer.walk: no link out of it (``.Files.Get`` and values
# would otherwise reach any file, /proc/self/environ included), no loop, no special file, and at most
# this much of it (the vendored charts are ~120 files, ~0.6 MiB).
CHART_BUDGET = Budget(files=10_000, bytes=64 * 2**20, depth=32)


@contextmanager
def offline_chart(chart: Path, templates: tuple[str, ...] = OFFLINE_TEMPLATES) -> Iterator[Path]:
    """A scratch copy of ``chart`` with only ``templates`` (ones that render without a cluster), of plain
    files only: a link inside the chart is copied as the file it names, one out of it is PLT-CHART-FILES."""

    def keep(rel: str) -> bool:
        top, _, rest = rel.partition("/")
        if top == "templates":
            return not rest or rest.partition("/")[0] in templates
        # sources/ is read only by templates/sources.yaml (.Files.Glob); without that template it is
        # ~100 files of copying for nothing.
        return top != "sources" or "sources.yaml" in templates

    listed = chart_files(chart, keep)
    with scratch_held(), tempfile.TemporaryDirectory(prefix="cozy-render-chart-") as tmp:
        copy = Path(tmp) / "platform"
        copy.mkdir()
        (copy / "templates").mkdir()
        walk.copy(listed, copy)
        yield copy


def chart_files(chart: Path, keep: Callable[[str], bool] | None = None) -> list[walk.File]:
    """The chart's files as ``renderer.walk`` lists them; a refused entry is one PLT-CHART-FILES line."""
    try:
        return walk.files(chart, CHART_BUDGET, keep)
    except walk.WalkRefused as refused:
        raise fail("PLT-CHART-FILES", f"platform chart {quote(str(chart))}: {quote(refused.rel)} "
                   f"{refused.message}") from None


def values_files(chart: Path, variant: str) -> list[Path]:
    """values.yaml then the platform variant's file, as the operator's PackageSource lists them."""
    return [chart / "values.yaml"] + [chart / name for name in VARIANT_FILES.get(variant, ())]


def template(helm: str, chart: Path, value_files: list[Path], values: dict[str, Any] | None = None,
             extra_args: list[str] | None = None, clusters: int = 1, shared: bool = False) -> ChartRender:
    """Run ``helm template`` once, within ``bounds(clusters)``. ``values`` (the platform Package's
    values) go last, as JSON so their types reach Helm exactly (JSON is YAML). helm's own failure (a
    limit, a crash, not helm) raises ``HelmFailure``; the chart's is the result's ``failure``."""
    done = _helm_template(helm, chart, value_files, values, extra_args, clusters)
    if done.returncode != 0:
        return ChartRender([], parse_failure(done.stderr))
    return ChartRender(_documents(done.stdout, helm, shared), None)


# --- every helm process is bounded -------------------------------------------------------------------
# helm runs on a chart that may be hostile (``--platform-chart``) and on values from the repository, so
# each process gets limits that a real render never comes near (a batch of 40 clusters of the vendored
# chart takes about 0.5 s of CPU and 170 MiB) and that stop a template looping or building huge strings
# well inside the hostile-input budget (5 s of CPU, 500 MiB; tests/effective/test_helm_bounds.py).
# SECURITY.md "Budgets and limits" lists them.
CPU_SECONDS = 3  # RLIMIT_CPU of one helm process rendering one cluster (SIGKILL when spent) ...
CPU_SECONDS_PER_CLUSTER = 0.1  # ... plus this per cluster of a batch
TIMEOUT_SECONDS = 60  # wall clock of one helm process: then its process group is killed
DATA_BYTES = 256 * 2**20  # RLIMIT_DATA: heap and every private writable mapping (Go reserves ~800 MiB of
#                           address space it never touches, so RLIMIT_AS cannot bound it)
GO_MEMORY_LIMIT = "192MiB"  # GOMEMLIMIT, with GOGC=off: no collection below it (a batch renders in half
#                             the CPU), collection up to the hard limit above it
OUTPUT_BYTES = 64 * 2**20  # helm's stdout, read in chunks: more kills helm
ERROR_BYTES = 1 * 2**20  # helm's stderr, the same


class Bounds(NamedTuple):
    cpu_seconds: int
    timeout: float
    data_bytes: int
    output_bytes: int


def bounds(clusters: int = 1) -> Bounds:
    """The limits of one helm process rendering ``clusters`` clusters."""
    import math

    return Bounds(CPU_SECONDS + math.ceil(CPU_SECONDS_PER_CLUSTER * max(0, clusters - 1)), TIMEOUT_SECONDS,
                  DATA_BYTES, OUTPUT_BYTES)


class HelmFailure(Exception):
    """helm itself failed (stopped by a limit, crashed, or not helm): never the chart's verdict.

    ``message`` is one line for ``error[PLT-HELM]``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# What only the Go runtime (never helm's own error handling, which prints "Error: ..." and exits 1) says.
_GO_CRASH = re.compile(r"^(?:fatal error: |panic: |runtime: |goroutine \d+ \[|SIG[A-Z]+: )", re.M)


def helm_failure(helm: str, returncode: int, stderr: str, limits: Bounds) -> str | None:
    """Why a finished helm process is helm's own failure, not an answer; None when it answered (0) or the
    chart refused (exit 1 with helm's ``Error:`` line and no Go runtime crash)."""
    import signal

    crash = _GO_CRASH.search(stderr)
    if returncode == 0 and crash is None:
        return None
    if returncode == 1 and crash is None and any(line.startswith("Error: ") for line in stderr.splitlines()):
        return None
    if returncode == -signal.SIGKILL or returncode == -signal.SIGXCPU:
        return f"helm was stopped by its CPU limit ({limits.cpu_seconds} s)"
    if crash is not None:
        first = stderr[crash.start():].splitlines()[0]
        if "out of memory" in first or "cannot allocate memory" in first or "reserve" in first:
            return (f"helm ran out of memory ({first[:120]}; its limit is {limits.data_bytes // 2**20} MiB of data, "
                    "and Go needs about 1 GiB of address space: a lower RLIMIT_AS on cozy-render stops helm)")
        return f"helm crashed ({first[:160]}; exit {returncode})"
    if returncode < 0:
        return f"helm was killed by signal {-returncode}"
    said = next((line for line in stderr.splitlines() if line.strip()), "")
    return f"helm failed without an error of its own (exit {returncode}{': ' + said[:160] if said else ''})"


class _Done(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def _helm_template(helm: str, chart: Path, value_files: list[Path], values: dict[str, Any] | None,
                   extra_args: list[str] | None = None, clusters: int = 1) -> _Done:
    with scratch_held(), tempfile.TemporaryDirectory(prefix="cozy-render-values-") as tmp:
        args = [helm, "template", RELEASE, str(chart), "--namespace", NAMESPACE]
        for file in value_files:
            args += ["--values", str(file)]
        if values is not None:
            user = Path(tmp) / "platform-values.json"
            user.write_text(json.dumps(values), encoding="utf-8")
            args += ["--values", str(user)]
        args += extra_args or []
        return run_bounded(args, Path(tmp), bounds(clusters))


def helm_env(home: Path) -> dict[str, str]:
    """helm's environment: no HELM_* or Go runtime settings of the caller's, scratch helm homes, and the
    Go memory settings of ``GO_MEMORY_LIMIT``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HELM_", "GO")) and k not in ("GODEBUG", "GOTRACEBACK")}
    env.update(HELM_CACHE_HOME=str(home / "cache"), HELM_CONFIG_HOME=str(home / "config"),
               HELM_DATA_HOME=str(home / "data"), GOGC="off", GOMEMLIMIT=GO_MEMORY_LIMIT, GOTRACEBACK="single")
    return env


def run_bounded(args: list[str], home: Path, limits: Bounds, answer_only: bool = True) -> _Done:
    """Run helm in its own process group under ``limits`` (``renderer.childproc``: stdout and stderr read
    as they come up to their caps, the wall clock as one deadline, the group killed on every exit path),
    with RLIMIT_CPU and RLIMIT_DATA set on the child (``prlimit`` right after it starts: ``preexec_fn`` is
    unsafe beside the batch threads). A limit hit raises ``HelmFailure``, as does (with ``answer_only``)
    any end that is not helm's own answer: its output, or the chart's error."""
    try:
        done = childproc.run(args, helm_env(home), timeout=limits.timeout, stdout_bytes=limits.output_bytes,
                             stderr_bytes=ERROR_BYTES, name="helm", on_start=lambda pid: _limit(pid, limits))
    except OSError as exc:
        raise HelmFailure(f"helm cannot run: {exc.strerror or exc}") from None
    except childproc.ChildLimit as exc:
        if exc.stream is None:
            raise HelmFailure(f"helm did not finish within its time limit ({limits.timeout:g} s)") from None
        cap = limits.output_bytes if exc.stream == "stdout" else ERROR_BYTES
        raise HelmFailure(f"helm wrote more than {cap // 2**20} MiB to {exc.stream}") from None
    stdout = done.stdout.decode("utf-8", "replace")
    stderr = done.stderr.decode("utf-8", "replace")
    problem = helm_failure(args[0], done.returncode, stderr, limits) if answer_only else None
    if problem is not None:
        raise HelmFailure(problem)
    return _Done(done.returncode, stdout, stderr)


def _limit(pid: int, limits: Bounds) -> None:
    import resource

    prlimit = getattr(resource, "prlimit", None)
    if prlimit is None:  # not Linux: the wall-clock deadline and the output caps still hold
        return
    for which, value in ((resource.RLIMIT_CPU, limits.cpu_seconds), (resource.RLIMIT_DATA, limits.data_bytes),
                         (resource.RLIMIT_CORE, 0)):
        try:
            _, hard = prlimit(pid, which)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            prlimit(pid, which, (cap, cap))
        except (OSError, ValueError):
            pass  # the child is already gone: its exit status says why


def render_platform(helm: str, chart: Path, variant: str, values: dict[str, Any]) -> ChartRender:
    """The platform release for ``variant`` and the rendered values: the bundles and every template
    outside them (PackageSources aside), ``lookup`` answered as ANSWERED_LOOKUPS says."""
    with release_chart(chart) as copy:
        return template(helm, copy, values_files(copy, variant), values)


# helm's output nests no deeper than this (the vendored charts' deepest object is 8 levels; CRD
# schemas reach about 30). libyaml's composer recurses in C per level, so a template emitting thousands
# of nested lists crashed the process (200,000 levels) or overflowed the stack of every later walk.
OUTPUT_DEPTH = 128


class OutputRefused(ValueError):
    """helm's output is YAML no Kubernetes object is: nested past ``OUTPUT_DEPTH`` or, through aliases,
    more nodes than characters."""


def parse_documents(text: str) -> list[dict[str, Any]]:
    """helm's output (larger than the overlay reader's budgets allow, and capped by ``OUTPUT_BYTES``):
    YAML 1.1 as the API server's sigs.k8s.io/yaml reads it, through libyaml. The event stream (libyaml's
    parser keeps its own stack: it never recurses) is checked first, so the composer never sees a
    document nested deeper than ``OUTPUT_DEPTH``, and aliases cannot make more nodes than the text has
    characters (a "billion laughs" of anchors would otherwise be copied out in full)."""
    yaml = YAML(typ="safe", pure=False)
    yaml.version = (1, 1)
    _refuse_shape(yaml.parse(text), len(text) + 1024)
    return [doc for doc in yaml.load_all(text) if isinstance(doc, dict)]


def _refuse_shape(events: Iterator[Any], max_nodes: int) -> None:
    starts, ends = (MappingStartEvent, SequenceStartEvent), ("MappingEndEvent", "SequenceEndEvent")
    anchored: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, levels) of what it names
    open_: list[list[Any]] = []  # [anchor, nodes, levels below] per open collection
    nodes = 0
    for event in events:
        kind = type(event)
        if kind in starts:
            open_.append([event.anchor, 1, 0])
            if len(open_) > OUTPUT_DEPTH:
                raise OutputRefused(f"nests deeper than {OUTPUT_DEPTH} levels")
            nodes += 1
            continue
        if kind.__name__ in ends:
            anchor, size, below = open_.pop()
            levels = below + 1
            if anchor:
                anchored[anchor] = (size, levels)
        elif kind is ScalarEvent:
            size, levels = 1, 0
            nodes += 1
            if event.anchor:
                anchored[event.anchor] = (1, 0)
        elif kind is AliasEvent:
            size, levels = anchored.get(event.anchor, (1, 0))
            nodes += size
            if len(open_) + levels > OUTPUT_DEPTH:
                raise OutputRefused(f"nests deeper than {OUTPUT_DEPTH} levels once its aliases are expanded")
        else:
            continue
        if nodes > max_nodes:
            raise OutputRefused("holds more nodes than characters once its aliases are expanded")
        if open_:
            open_[-1][1] += size
            open_[-1][2] = max(open_[-1][2], levels)


# helm writes each document as "---\n# Source: <template>\n<text>"; the same text parses to the same
# objects, and most of a fleet's documents are the same text (a Package that no cluster value reaches),
# so each distinct text is parsed once per process and copied out (callers may change what they get).
_PARSED: dict[str, list[Any]] = {}
PARSED_SIZE = 8192
_DOCUMENT = re.compile(r"(?m)^---\n")
_SOURCE_LINE = re.compile(r"\A# Source: [^\n]*\n")


def _documents(stdout: str, helm: str = "helm", shared: bool = False) -> list[dict[str, Any]]:
    """``parse_documents(stdout)``, one document text at a time through ``_PARSED``. A document marker
    at the start of a line always ends a document in YAML (inside block scalars too), so parsing the
    pieces gives the whole stream's documents; the ``# Source:`` comment that names the template is
    dropped from the key (a comment is not data), so the same document of two clusters is one key.
    ``shared``: the memo's own objects, for a caller that only reads them."""
    out: list[dict[str, Any]] = []
    for piece in _DOCUMENT.split(stdout):
        text = _SOURCE_LINE.sub("", piece, count=1)
        if not text.strip():
            continue
        docs = _PARSED.get(text)
        if docs is None:
            try:
                docs = parse_documents(text)
            except OutputRefused as exc:
                source = _SOURCE_LINE.match(piece)
                template = printable(source.group()[len("# Source: "):-1], 200) if source else "a template"
                raise HelmFailure(f"the chart's output of {template} {exc}: not a Kubernetes object") from None
            except (YAMLError, ValueError, RecursionError) as exc:
                raise HelmFailure(f"{helm} wrote output that is not YAML ({type(exc).__name__}): not a helm "
                                  "answer") from None
            if len(_PARSED) >= PARSED_SIZE:
                _PARSED.pop(next(iter(_PARSED)))
            _PARSED[text] = docs
        out.extend(docs if shared else (copy_tree(doc) for doc in docs))
    return out


_EXECUTION = re.compile(r"execution error at \((?:[^/]+/)?(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+)\): (?P<msg>.*)$",
                        re.S)
_TEMPLATE = re.compile(r"template: (?:[^/]+/)?(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$", re.S)


def parse_failure(stderr: str) -> ChartFailure:
    """Helm's error as the chart said it. Warnings (coalesce.go) precede the ``Error:`` line."""
    lines = [line for line in stderr.splitlines() if line.startswith("Error: ")]
    raw = lines[0][len("Error: "):] if lines else stderr.strip().splitlines()[-1] if stderr.strip() else "helm failed"
    for pattern in (_EXECUTION, _TEMPLATE):
        found = pattern.search(raw)
        if found:
            return ChartFailure(found["msg"].strip(), found["file"], int(found["line"]), int(found["col"]), raw)
    return ChartFailure(raw.strip(), "", 0, 0, raw)


# --- many clusters in one helm process ---------------------------------------------------------------

BATCH = 40  # clusters per `helm template` (each a subchart of one umbrella chart)
SUBCHART = "platform"  # the one chart on disk in an umbrella; each cluster is an alias of it (c0..cN)
_SOURCE = re.compile(r"^# Source: umbrella/charts/c(\d+)/", re.M)
_IN_SUBCHART = re.compile(r"umbrella/charts/c(\d+)/")


def _merge_maps(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Helm's ``-f a -f b`` merge (pkg/cli/values ``mergeMaps``): maps merge key by key, anything else
    from ``b`` replaces, ``null`` included (the chart's coalesce then deletes those keys), so the
    merged map coalesced under a subchart gives what the separate files gave."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge_maps(out[key], value)
        else:
            out[key] = value
    return out


_VALUES_FILES: dict[bytes, dict[str, Any]] = {}


def _values_file(path: Path) -> dict[str, Any]:
    """A chart's values file as helm reads it, once per process while it is unchanged (read only: the
    merge copies what it changes)."""
    data = path.read_bytes()  # in the scratch copy (offline_chart): a new folder each run, so keyed by content
    key = hashlib.blake2b(data, digest_size=16).digest()
    if key not in _VALUES_FILES:
        yaml = YAML(typ="safe", pure=False)
        yaml.version = (1, 1)  # sigs.k8s.io/yaml (go-yaml v2), as helm reads values files
        loaded = yaml.load(data.decode("utf-8"))
        _VALUES_FILES[key] = loaded if isinstance(loaded, dict) else {}
    return _VALUES_FILES[key]


def render_platform_many(helm: str, chart: Path, inputs: list[tuple[str, dict[str, Any]]],
                         parallel: int = 1, shared: bool = False) -> list[ChartRender]:
    """``render_platform`` for each (variant, values) of ``inputs``, ``BATCH`` at a time in one helm
    process: an umbrella chart whose dependencies are one copy of the offline chart on disk under an
    alias per cluster (c0..cN; helm loads and parses the chart once per alias in memory, not from N
    copies), each alias given that cluster's values files merged as ``-f`` merges them. Identical
    inputs are rendered once. A batch the chart fails on is split: the failing cluster is rendered on
    its own (so its failure is helm's own message for it) and the rest again; ``parallel`` batches run
    at once. helm's own failure (``HelmFailure``: a limit, a crash) of a batch is retried one cluster at
    a time, and raised at the first cluster that fails it alone. tests/effective/test_batch_helm.py
    proves all this equal to one run per cluster. ``shared``: documents a caller only reads (the same
    text of two clusters is then one object)."""
    keys = [json.dumps([variant, values], sort_keys=True, default=str) for variant, values in inputs]
    distinct: dict[str, tuple[str, dict[str, Any]]] = {}
    for key, item in zip(keys, inputs, strict=True):
        distinct.setdefault(key, item)
    unique = list(distinct.values())
    batches = [unique[start:start + BATCH] for start in range(0, len(unique), BATCH)]
    with release_chart(chart) as copy:
        defaults = _values_file(copy / "values.yaml")  # the copy's: the chart's own file may be a link out
        variants = {variant: _variant_values(copy, variant, defaults) for variant in {v for v, _ in unique}}
        if parallel <= 1 or len(batches) == 1:
            rendered = [r for group in batches for r in _batch(helm, copy, group, variants, shared)]
        else:
            from concurrent.futures import ThreadPoolExecutor

            # helm processes side by side, up to ``parallel`` (the run's --jobs); results in input order
            with ThreadPoolExecutor(max_workers=parallel) as pool:
                rendered = [r for done in pool.map(lambda group: _batch(helm, copy, group, variants, shared),
                                                   batches) for r in done]
    by_key = dict(zip(distinct, rendered, strict=True))
    handed: set[str] = set()
    out = []
    for key in keys:  # a repeated input gets its own copy of the documents, as a run of its own would
        render = by_key[key]
        if key in handed and not shared:
            render = ChartRender([copy_tree(doc) for doc in render.documents], render.failure)
        handed.add(key)
        out.append(render)
    return out


def _variant_values(copy: Path, variant: str, defaults: dict[str, Any]) -> dict[str, Any]:
    merged = defaults
    for extra in values_files(copy, variant)[1:]:
        merged = _merge_maps(merged, _values_file(extra))
    return merged


def _batch(helm: str, copy: Path, inputs: list[tuple[str, dict[str, Any]]],
           variants: dict[str, dict[str, Any]], shared: bool = False) -> list[ChartRender]:
    if len(inputs) == 1:
        variant, values = inputs[0]
        return [template(helm, copy, values_files(copy, variant), values, shared=shared)]
    with scratch_held(), tempfile.TemporaryDirectory(prefix="cozy-render-umbrella-") as tmp:
        umbrella = Path(tmp) / "umbrella"
        (umbrella / "charts").mkdir(parents=True)
        shutil.copytree(copy, umbrella / "charts" / SUBCHART)
        chart_yaml = (copy / "Chart.yaml").read_text(encoding="utf-8")
        name = re.search(r"(?m)^name: *(\S+) *$", chart_yaml)
        if name is None or name.group(1) != SUBCHART:  # the dependency names the chart by its own name
            (umbrella / "charts" / SUBCHART / "Chart.yaml").write_text(
                re.sub(r"(?m)^name:.*$", f"name: {SUBCHART}", chart_yaml) if name is not None
                else chart_yaml + f"\nname: {SUBCHART}\n", encoding="utf-8")
        dependencies = "".join(f"  - name: {SUBCHART}\n    version: \"*\"\n    alias: c{index}\n"
                               for index in range(len(inputs)))
        (umbrella / "Chart.yaml").write_text("apiVersion: v2\nname: umbrella\nversion: 0.0.0\ndependencies:\n"
                                             + dependencies, encoding="utf-8")
        parent = {f"c{index}": _merge_maps(variants[variant], values) for index, (variant, values) in enumerate(inputs)}
        try:
            done = _helm_template(helm, umbrella, [], parent, clusters=len(inputs))
        except HelmFailure:
            done = None
    if done is None:  # helm itself failed on the batch: one at a time finds the cluster (or raises)
        return [r for item in inputs for r in _batch(helm, copy, [item], variants, shared)]
    if done.returncode == 0:
        return _split(done.stdout, len(inputs), helm, shared)
    failed = _IN_SUBCHART.search(parse_failure(done.stderr).raw)
    if failed is None or int(failed.group(1)) >= len(inputs):  # cannot tell who: one by one
        return [r for item in inputs for r in _batch(helm, copy, [item], variants, shared)]
    index = int(failed.group(1))
    before = _batch(helm, copy, inputs[:index], variants, shared) if index else []
    after = _batch(helm, copy, inputs[index + 1:], variants, shared) if index + 1 < len(inputs) else []
    return before + _batch(helm, copy, [inputs[index]], variants, shared) + after


def _split(stdout: str, count: int, helm: str, shared: bool = False) -> list[ChartRender]:
    """The umbrella's documents back to their clusters, in order, by their ``# Source:`` lines."""
    texts: list[list[str]] = [[] for _ in range(count)]
    for document in _DOCUMENT.split(stdout):
        found = _SOURCE.search(document)
        if found is not None:
            texts[int(found.group(1))].append(document)
    return [ChartRender(_documents("---\n" + "---\n".join(parts), helm, shared) if parts else [], None)
            for parts in texts]


# --- the templates outside bundles/ (issue 35 item 1) ---------------------------------------------------
# Every template the platform release renders besides the bundles and sources.yaml: they read platform
# values the bundles do not (certificates, DNS-01, scheduling, migrations, sourceRef, registries), and
# their failures fail the release in the cluster. helm template answers `lookup` with nothing; these
# lookups are answered as the operator's cluster answers them instead (ANSWERED_LOOKUPS).
CLUSTER_TEMPLATES = ("apps.yaml", "containerd-registry-secret.yaml", "cozystack-version.yaml",
                     "deletion-protection.yaml", "migration-hook.yaml", "repository.yaml", "scheduling.yaml")
RELEASE_TEMPLATES = (*OFFLINE_TEMPLATES, *CLUSTER_TEMPLATES)
# The operator creates the platform's source before it installs the release (cozystack-operator
# installPlatformPackageSource): OCIRepository cozy-system/cozystack-platform, values.yaml's sourceRef.
OPERATOR_SOURCE = ("OCIRepository", "cozy-system", "cozystack-platform")
ANSWERED_LOOKUPS = (
    "templates/repository.yaml: the flux source named by sourceRef exists when it is the one the operator "
    "creates (OCIRepository cozy-system/cozystack-platform), with an empty spec; any other is absent "
    "(the chart then fails: Source repository ... not found)",
    "templates/apps.yaml, cozystack-version.yaml, migration-hook.yaml: ConfigMaps kube-system/kube-root-ca.crt, "
    "cozy-system/cozystack and cozy-system/cozystack-version absent (a first install)",
)
_SOURCE_LOOKUP = "lookup $apiVersion $kind $namespace $name"


def _answer_source_lookup(copy: Path) -> None:
    """Rewrite repository.yaml's ``lookup`` of the flux source (in the scratch copy only) into the
    answer the operator's cluster gives: a source when it is the operator's own, else nothing."""
    path = copy / "templates" / "repository.yaml"
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    kind, namespace, name = OPERATOR_SOURCE
    answer = (f'(ternary (dict "spec" (dict)) (dict) (and (eq (toString $kind) "{kind}") '
              f'(eq (toString $namespace) "{namespace}") (eq (toString $name) "{name}")))')
    path.unlink()  # a new file, never a write through whatever the copy's entry is (a link, a shared inode)
    path.write_text(text.replace(_SOURCE_LOOKUP, answer), encoding="utf-8")


@contextmanager
def release_chart(chart: Path) -> Iterator[Path]:
    """``offline_chart`` with every template the release renders (the bundles and CLUSTER_TEMPLATES;
    sources.yaml aside, read from the chart folder), the source lookup answered."""
    with offline_chart(chart, RELEASE_TEMPLATES) as copy:
        _answer_source_lookup(copy)
        yield copy
