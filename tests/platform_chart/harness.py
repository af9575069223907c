"""A helm-unittest harness the project owns: runs the chart's own ``tests/*_test.yaml`` suites
against renders by a real helm.

Supported (what the vendored suites use; format: github.com/helm-unittest/helm-unittest DOCUMENT.md):
suite ``templates``, ``release``, ``capabilities.apiVersions``, ``kubernetesProvider`` (objects
served by a fake API server over real HTTP, so helm's own ``lookup`` finds them); per test ``set``
(nested or dotted keys), ``values`` (files relative to the suite), ``template``/``templates``,
``documentSelector`` (per test or per assert)
(``path``/``value``), ``capabilities``; asserts ``equal``, ``notEqual``, ``exists``, ``notExists``,
``contains``/``notContains`` (``any``, ``count``), ``containsDocument``, ``hasDocuments``,
``matchRegex``, ``matchRegexRaw``/``notMatchRegexRaw``, ``failedTemplate`` (``errorMessage``,
``errorPattern``), each with ``not``, ``template`` and ``documentIndex``.

Each template is rendered on its own (a scratch chart with ``_helpers.tpl`` and that template), so
a failure in one template does not hide the documents of another, as in helm-unittest.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from ruamel.yaml import YAML

from tests.platform_chart.fake_api import FakeCluster, serve

_MISSING = object()


class Render(NamedTuple):
    documents: list[dict[str, Any]]
    raw: str
    error: str | None  # helm's error line (after "Error: "), when the template fails


class Case(NamedTuple):
    suite: Path
    index: int
    name: str


def load(path: Path) -> dict[str, Any]:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def cases(folder: Path) -> list[Case]:
    out = []
    for suite in sorted(folder.glob("*_test.yaml")):
        for index, test in enumerate(load(suite).get("tests") or []):
            out.append(Case(suite, index, test["it"]))
    return out


def expand_set(values: dict[str, Any]) -> dict[str, Any]:
    """helm-unittest ``set``: nested maps, and dotted keys as paths (``a.b: 1``)."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        target = out
        parts = str(key).split(".")
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        if isinstance(value, dict) and isinstance(target.get(parts[-1]), dict):
            target[parts[-1]] = {**target[parts[-1]], **expand_set(value)}
        else:
            target[parts[-1]] = expand_set(value) if isinstance(value, dict) else value
    return out


class ChartRunner:
    def __init__(self, helm: str, chart: Path, scratch: Path) -> None:
        self.helm = helm
        self.chart = chart
        self.scratch = scratch
        self._copies: dict[str, Path] = {}

    def copy_for(self, template: str) -> Path:
        """A chart copy holding only ``template`` (and the helpers)."""
        if template not in self._copies:
            copy = self.scratch / f"chart-{len(self._copies)}" / self.chart.name
            shutil.copytree(self.chart, copy, ignore=shutil.ignore_patterns("templates"))
            (copy / "templates").mkdir()
            shutil.copy2(self.chart / "templates" / "_helpers.tpl", copy / "templates" / "_helpers.tpl")
            target = copy / template
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.chart / template, target)
            self._copies[template] = copy
        return self._copies[template]

    def render(self, template: str, values: dict[str, Any], value_files: list[Path], release: dict[str, Any],
               api_versions: list[str] | None, provider: dict[str, Any] | None) -> Render:
        copy = self.copy_for(template)
        with tempfile.TemporaryDirectory(dir=self.scratch) as tmp:
            user = Path(tmp) / "set.json"
            user.write_text(json.dumps(values))
            if template.endswith("NOTES.txt"):
                return self._notes(copy, tmp, values, value_files, release, api_versions)
            args = [self.helm, "template", release.get("name", "RELEASE-NAME"), str(copy),
                    "--namespace", release.get("namespace", "default")]
            for file in value_files:
                args += ["--values", str(file)]
            args += ["--values", str(user)]
            for api in api_versions or []:
                args += ["--api-versions", api]
            env = {"HOME": tmp, "PATH": "/usr/bin:/bin", "HELM_CACHE_HOME": f"{tmp}/c", "HELM_CONFIG_HOME": f"{tmp}/f",
                   "HELM_DATA_HOME": f"{tmp}/d"}
            if provider is not None:
                cluster = FakeCluster(provider.get("objects") or [], provider.get("scheme"))
                with serve(cluster, Path(tmp)) as kubeconfig:
                    done = subprocess.run(args + ["--dry-run=server", "--kubeconfig", str(kubeconfig)],
                                          capture_output=True, text=True, env=env, timeout=120, check=False)
            else:
                done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, check=False)
        if done.returncode != 0:
            errors = [line[len("Error: "):] for line in done.stderr.splitlines() if line.startswith("Error: ")]
            error = errors[0] if errors else done.stderr.strip()
            if "could not find template" in error:  # renders nothing (a template that emits no document)
                return Render([], "", None)
            return Render([], "", error)
        yaml = YAML(typ="safe")
        raw = re.sub(r"^# Source: .*$", "", done.stdout, flags=re.M)
        return Render([d for d in yaml.load_all(done.stdout) if d is not None], raw, None)


    def _notes(self, copy: Path, tmp: str, values: dict[str, Any], value_files: list[Path], release: dict[str, Any],
               api_versions: list[str] | None) -> Render:
        """NOTES.txt is printed only by install: ``helm install --dry-run=client`` against the fake
        API server, whose discovery serves exactly the test's ``capabilities.apiVersions``."""
        user = Path(tmp) / "notes-set.json"
        user.write_text(json.dumps(values))
        scheme = {}
        for api in api_versions or []:
            group_version, _, _kind = api.rpartition("/")
            group, _, version = group_version.rpartition("/")
            scheme[api] = {"gvr": {"group": group, "version": version}, "namespaced": False}
        args = [self.helm, "install", release.get("name", "RELEASE-NAME"), str(copy), "--namespace",
                release.get("namespace", "default"), "--dry-run=client"]
        for file in value_files:
            args += ["--values", str(file)]
        args += ["--values", str(user)]
        env = {"HOME": tmp, "PATH": "/usr/bin:/bin", "HELM_CACHE_HOME": f"{tmp}/c", "HELM_CONFIG_HOME": f"{tmp}/f",
               "HELM_DATA_HOME": f"{tmp}/d"}
        with serve(FakeCluster([], scheme, core=False), Path(tmp)) as kubeconfig:
            done = subprocess.run(args + ["--kubeconfig", str(kubeconfig)], capture_output=True, text=True, env=env,
                                  timeout=120, check=False)
        if done.returncode != 0:
            return Render([], "", done.stderr.strip())
        notes = done.stdout.split("NOTES:\n", 1)
        return Render([], notes[1] if len(notes) > 1 else "", None)


def get_path(doc: Any, path: str) -> Any:
    """helm-unittest paths: dotted keys, ``[n]`` indexes and ``["quoted.key"]``."""
    tokens = re.findall(r'\["([^"]*)"\]|\[(\d+)\]|([^.\[\]]+)', path)
    node = doc
    for quoted, index, plain in tokens:
        if index:
            if not isinstance(node, list) or int(index) >= len(node):
                return _MISSING
            node = node[int(index)]
            continue
        key = quoted or plain
        if not isinstance(node, dict) or key not in node:
            return _MISSING
        node = node[key]
    return node


def _subset(part: Any, whole: Any) -> bool:
    if isinstance(part, dict) and isinstance(whole, dict):
        return all(k in whole and _subset(v, whole[k]) for k, v in part.items())
    return part == whole


def error_text(error: str) -> str:
    """The message helm-unittest compares: a fail guard's text, else the whole error."""
    found = re.search(r"execution error at \([^)]*\): (.*)$", error, re.S)
    return found.group(1) if found else error


def run_case(runner: ChartRunner, case: Case) -> list[str]:
    """Every failed assertion of one test (empty: the case passes)."""
    suite = load(case.suite)
    test = suite["tests"][case.index]
    templates = [test["template"]] if test.get("template") else \
        list(test.get("templates") or suite.get("templates") or [])
    values = expand_set(test.get("set") or {})
    files = [(case.suite.parent / f).resolve() for f in test.get("values") or []]
    files = [runner.chart / f.name if not f.is_file() and (runner.chart / f.name).is_file() else f for f in files]
    capabilities = test.get("capabilities") or suite.get("capabilities") or {}
    api_versions = capabilities.get("apiVersions")
    provider = test.get("kubernetesProvider") or suite.get("kubernetesProvider")
    release = {**(suite.get("release") or {}), **(test.get("release") or {})}
    renders: dict[str, Render] = {}

    def rendered(template: str) -> Render:
        if template not in renders:
            renders[template] = runner.render(template, values, files, release, api_versions, provider)
        return renders[template]

    failures = []
    for number, assertion in enumerate(test.get("asserts") or []):
        negate = bool(assertion.get("not"))
        scope = [assertion["template"]] if assertion.get("template") else templates
        (kind, spec), = ((k, v) for k, v in assertion.items()
                         if k not in ("not", "template", "documentIndex", "documentSelector"))
        spec = spec or {}
        results = [rendered(t) for t in scope]
        if kind == "failedTemplate":
            errors = [r.error for r in results if r.error]
            ok = bool(errors)
            if ok and "errorMessage" in spec:
                ok = any(error_text(e) == spec["errorMessage"] for e in errors)
            if ok and "errorPattern" in spec:
                ok = any(re.search(spec["errorPattern"], e, re.S) for e in errors)
            if ok == negate:
                failures.append(f"#{number} failedTemplate {spec}: errors {errors}")
            continue
        broken = [r.error for r in results if r.error]
        if broken:
            failures.append(f"#{number} {kind}: template failed: {broken[0]}")
            continue
        docs = [d for r in results for d in r.documents]
        if kind in ("matchRegexRaw", "notMatchRegexRaw"):
            raw = "".join(r.raw for r in results)
            ok = bool(re.search(spec["pattern"], raw)) != (kind == "notMatchRegexRaw")
            if ok == negate:
                failures.append(f"#{number} {kind} {spec['pattern']!r}")
            continue
        if kind == "hasDocuments":
            ok = len(docs) == spec.get("count", len(docs))
            if ok == negate:
                failures.append(f"#{number} hasDocuments {spec}: {len(docs)} documents")
            continue
        if kind == "containsDocument":
            ok = any(_is_document(d, spec) for d in docs)
            if ok == negate:
                failures.append(f"#{number} containsDocument {spec}")
            continue
        selector = assertion.get("documentSelector") or test.get("documentSelector")
        if selector:
            docs = [d for d in docs if get_path(d, selector["path"]) == selector.get("value")]
            if not docs:
                failures.append(f"#{number} {kind}: no document where {selector['path']} == {selector.get('value')!r}")
                continue
        elif "documentIndex" in assertion and assertion["documentIndex"] >= 0:
            docs = docs[assertion["documentIndex"]:assertion["documentIndex"] + 1]
        if not docs:
            failures.append(f"#{number} {kind}: no documents rendered")
            continue
        for doc in docs:
            problem = _check(kind, spec, doc)
            if (problem is None) == negate:
                failures.append(f"#{number} {kind} {spec}{' (not)' if negate else ''}: {problem or 'held'}")
    return failures


def _is_document(doc: dict[str, Any], spec: dict[str, Any]) -> bool:
    meta = doc.get("metadata") or {}
    return doc.get("apiVersion") == spec.get("apiVersion") and doc.get("kind") == spec.get("kind") and \
        ("name" not in spec or meta.get("name") == spec["name"]) and \
        ("namespace" not in spec or meta.get("namespace") == spec["namespace"])


def _check(kind: str, spec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    """None when the assertion holds on ``doc``, else why not."""
    value = get_path(doc, spec.get("path", ""))
    if kind == "equal":
        return None if value is not _MISSING and value == spec.get("value") else f"got {_show(value)}"
    if kind == "notEqual":
        return None if value != spec.get("value") else f"got {_show(value)}"
    if kind == "exists":
        return None if value is not _MISSING and value is not None else "absent"
    if kind == "notExists":
        return None if value is _MISSING or value is None else f"present: {_show(value)}"
    if kind in ("contains", "notContains"):
        if not isinstance(value, list):
            return f"not a list: {_show(value)}"
        content = spec.get("content")
        found = [item for item in value if (_subset(content, item) if spec.get("any") else item == content)]
        if "count" in spec:
            held = len(found) == spec["count"]
        else:
            held = bool(found)
        if kind == "notContains":
            held = not found
        return None if held else f"{_show(value)}"
    if kind == "matchRegex":
        if not isinstance(value, str):
            return f"not a string: {_show(value)}"
        return None if re.search(spec["pattern"], value) else f"{value!r} does not match"
    if kind == "notMatchRegex":
        if not isinstance(value, str):
            return f"not a string: {_show(value)}"
        return None if not re.search(spec["pattern"], value) else f"{value!r} matches"
    raise AssertionError(f"assert {kind} is not supported by the harness")


def _show(value: Any) -> str:
    return "<absent>" if value is _MISSING else json.dumps(value, default=str)[:300]
