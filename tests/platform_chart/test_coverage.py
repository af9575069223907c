"""No silent gap in the render-path model (issue 35 item 2): every platform value path a template of
either vendored chart version reads is replayed with its type checks or reported (PLT-18, "not
checked without helm"). The chart's templates are walked here, so a chart version that adds an
expression the model neither replays nor reports fails this test until it is reviewed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from renderer.check.rules import run_rules
from renderer.errors import RenderError
from renderer.load.overlay import load_overlay
from renderer.platform_chart import chart_dir, shipped_versions
from renderer.platform_chart.model import REPLAYED_BY_HAND, REPLAYED_TEMPLATES, chart_model, go_kind
from tests.conftest import overlay_doc
from tests.helpers import emit_overlay

# Reviewed: the (template, path) pairs the model reports as not checked without helm, per version.
# A new read in a chart version appears here as a test failure: replay it (model.py) or add it.
_APPS = ["authentication.oidc.enabled", "authentication.oidc.insecureSkipVerify",
         "authentication.oidc.keycloakExtraRedirectUri", "authentication.oidc.keycloakInternalUrl", "branding",
         "bundles.system.variant", "gateway.attachedNamespaces", "gateway.enabled", "monitoring",
         "monitoring.rootEnabled", "networking.clusterDomain", "publishing.apiServerEndpoint",
         "publishing.certificates.dns01", "publishing.certificates.issuerName", "publishing.certificates.wildcard",
         "publishing.certificates.wildcardSecretName", "publishing.exposedServices", "publishing.externalIPs",
         "publishing.host", "publishing.ingressName", "publishing.ingressNameAdmin", "publishing.loadBalancerClass",
         "publishing.proxyProtocol", "resources.cpuAllocationRatio", "resources.ephemeralStorageAllocationRatio",
         "resources.memoryAllocationRatio", "scheduling"]
_OTHERS = [("templates/cozystack-version.yaml", "migrations.targetVersion"),
           ("templates/migration-hook.yaml", "migrations"), ("templates/migration-hook.yaml", "migrations.enabled"),
           ("templates/migration-hook.yaml", "migrations.etcdAdoptSkipBackup"),
           ("templates/migration-hook.yaml", "migrations.image"),
           ("templates/migration-hook.yaml", "migrations.targetVersion"),
           ("templates/repository.yaml", "sourceRef"),
           ("templates/scheduling.yaml", "scheduling.globalAppTopologySpreadConstraints")]
REVIEWED = sorted([("templates/apps.yaml", p) for p in _APPS] + _OTHERS)


def _template_reads(version: str) -> dict[str, set[str]]:
    """Every `.Values.a.b` and `dig "a" "b" ... .Values` path, per template, read from the files here
    (independently of the catalogue generator)."""
    out: dict[str, set[str]] = {}
    chart = chart_dir(version)
    for file in sorted(p for p in (chart / "templates").rglob("*") if p.suffix in (".yaml", ".tpl")):
        text = re.sub(r"{{-?\s*/\*.*?\*/\s*-?}}", "", file.read_text(encoding="utf-8"), flags=re.S)
        paths = {m.group(1) for m in re.finditer(r"\.Values\.([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)", text)}
        for m in re.finditer(r'dig((?:\s+"[^"]+")+)\s+\S+\s+\(?\$?\w*\.Values((?:\.[A-Za-z_]\w*)*)', text):
            paths.add(".".join([p for p in m.group(2).split(".") if p] + re.findall(r'"([^"]+)"', m.group(1))))
        if paths:
            out[file.relative_to(chart).as_posix()] = paths
    return out


@pytest.mark.parametrize("version", shipped_versions())
def test_every_template_read_is_replayed_or_reported(version: str) -> None:
    model = chart_model(version)
    reported = set(model.unchecked_reads())
    gaps = []
    for template, paths in _template_reads(version).items():
        for path in sorted(paths):
            replayed = template in REPLAYED_TEMPLATES or path in _replayed_cluster_paths(template)
            if not replayed and (template, path) not in reported:
                gaps.append((template, path))
    assert gaps == [], f"read by the chart, neither replayed nor reported (PLT-18): {gaps}"
    assert sorted(reported) == REVIEWED, "a template read changed: review it, replay it or add it to REVIEWED"


def _replayed_cluster_paths(template: str) -> tuple[str, ...]:
    from renderer.platform_chart.model import REPLAYED_CLUSTER_PATHS

    return REPLAYED_CLUSTER_PATHS.get(template, ())


@pytest.mark.parametrize("version", shipped_versions())
def test_every_bundle_expression_the_generic_replay_skips_is_replayed_by_hand(version: str) -> None:
    skipped = {entry["expr"] for entry in chart_model(version).data["unmodelledChecks"]}
    assert skipped - set(REPLAYED_BY_HAND) == set()


_WRONG = {"map": "a-string", "string": 5, "bool": [1], "slice": {"a": 1}, "float64": [1]}


def _put(tree: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        tree = tree.setdefault(key, {})
    tree[last] = value


@pytest.mark.parametrize("version", shipped_versions())
def test_a_wrong_typed_value_on_any_unreplayed_path_is_never_silent(version: str, cluster) -> None:
    """Held-out shapes: for every reported path, a value of another kind than the chart's default
    gets PLT-18 (or a refusal the model already makes: PLT-13, a fail guard, the overlay schema)."""
    model = chart_model(version)
    defaults = model.effective_values("isp-full", {})
    silent = []
    for template, path in model.unchecked_reads():
        node: Any = defaults
        for key in path.split("."):
            node = node.get(key) if isinstance(node, dict) else None
        values: dict[str, Any] = {}
        _put(values, path, _WRONG[go_kind(node)])
        folder = cluster(overlay_doc(platform={"variant": "isp-full", "version": version, "values": values}))
        try:
            findings = run_rules(emit_overlay(load_overlay(folder)))
        except RenderError:
            continue  # refused before the rules (OVL-SCHEMA): not silent
        codes = {f.code for f in findings}
        if not codes & {"PLT-18", "PLT-13", "PLT-03", "PLT-04", "PLT-05", "PLT-06", "PLT-10"}:
            silent.append((template, path, json.dumps(values)))
    assert silent == []


# containerd-registry-secret.yaml, replayed whole (REPLAYED_CLUSTER_PATHS): every shape here fails the
# template or renders, and the model must say exactly what helm says.
REGISTRY_SHAPES: list[Any] = [
    "x", {"mirrors": "x"}, {"mirrors": 5}, {"mirrors": True}, {"mirrors": [None]}, {"mirrors": {"a": None}},
    {"mirrors": {"a": "x"}}, {"mirrors": {"a": {"endpoints": "e"}}}, {"mirrors": {"a": {"endpoints": ["e"]}}},
    {"mirrors": {"a": {"endpoints": ["e"]}}, "config": "x"}, {"mirrors": {"a": {"endpoints": ["e"]}}, "config": 5},
    {"mirrors": {"a": {"endpoints": ["e"]}}, "config": ["x"]},
    {"mirrors": {"a": {"endpoints": [5]}}, "config": {"e": {}}},
    {"mirrors": {"a": {"endpoints": ["e"]}}, "config": {"e": "x"}},
    {"mirrors": {"a": {"endpoints": ["e"]}}, "config": {"e": {"tls": "x"}}},
    {"mirrors": {"a": {"endpoints": ["e"]}}, "config": {"e": {"auth": "x"}}},
    {"mirrors": {"a": {"endpoints": ["e"]}}, "config": {"e": {"auth": {"username": 5}, "tls": {}}}},
    {"mirrors": {"a": {"endpoints": ["e"]}}, "config": {}},
]


@pytest.mark.parametrize("version", shipped_versions())
def test_the_registry_template_is_replayed_as_helm_renders_it(version: str, helm: str) -> None:
    from renderer.effective.helm import release_chart, template, values_files
    from renderer.load.variants import Variants
    from renderer.resolve.platform import PlatformFacts

    divergences = []
    with release_chart(chart_dir(version)) as copy:
        for shape in REGISTRY_SHAPES:
            values = {"registries": shape}
            failure = template(helm, copy, values_files(copy, "isp-full"), values).failure
            facts = PlatformFacts(Variants().catalogue(), "isp-full", values, version=version)
            ours = [f'executing "cozy-platform/{p.template}" {p.message}' for p in facts.chart_problems]
            theirs = [failure.message] if failure is not None else []
            if ours != theirs:
                divergences.append(f"{shape}: model {ours} helm {theirs}")
    assert divergences == [], "\n".join(divergences)


_BUNDLE_WRONG = {"map": ["a-string", [1]], "string": [5, [1], {"a": 1}], "bool": [[1], {"a": 1}],
                 "slice": [{"a": 1}, "x"], "float64": [[1], "x"], "invalid": ["x", [1], {"a": 1}]}


def _bundle_sets(version: str) -> list[tuple[str, dict[str, Any]]]:
    """A value of each wrong kind at every path the bundles and helpers read (the gpu and bundles keys
    have their own tests), on both isp-full variants."""
    model = chart_model(version)
    out = []
    for variant in ("isp-full", "isp-full-generic"):
        defaults = model.effective_values(variant, {})
        for template, paths in model.data["readsBy"].items():
            if template not in REPLAYED_TEMPLATES:
                continue
            for path in paths:
                if path.startswith(("gpu", "bundles.")):
                    continue
                node: Any = defaults
                for key in path.split("."):
                    node = node.get(key) if isinstance(node, dict) else None
                for shape in _BUNDLE_WRONG[go_kind(node)]:
                    values: dict[str, Any] = {"bundles": {"enabledPackages": ["cozystack.gpu-operator"]}}
                    _put(values, path, shape)
                    out.append((variant, values))
    return out


@pytest.mark.parametrize("version", shipped_versions())
def test_wrong_typed_values_the_bundles_read_fail_as_helm_fails(version: str, helm: str) -> None:
    """The replayed templates are replayed exactly: every wrong kind at every path they read gets the
    model's first problem equal to helm's failure (a fail guard's text, or the Go template error)."""
    from concurrent.futures import ThreadPoolExecutor

    from renderer.effective.helm import offline_chart, template, values_files
    from renderer.load.variants import Variants
    from renderer.resolve.platform import PlatformFacts

    sets = _bundle_sets(version)
    with offline_chart(chart_dir(version)) as copy, ThreadPoolExecutor(max_workers=4) as pool:
        failures = list(pool.map(lambda s: template(helm, copy, values_files(copy, s[0]), s[1]).failure, sets))
    divergences = []
    for (variant, values), failure in zip(sets, failures, strict=True):
        facts = PlatformFacts(Variants().catalogue(), variant, values, version=version)
        problems = [p for p in facts.chart_problems if p.template.startswith("templates/bundles/")]
        ours = None if not problems else problems[0].message if problems[0].kind == "fail" else \
            f'executing "cozy-platform/{problems[0].template}" {problems[0].message}'
        theirs = failure.message if failure is not None else None
        if ours != theirs:
            divergences.append(f"{variant} {values}: model {ours!r} helm {theirs!r}")
    assert len(sets) > 40 and divergences == [], "\n".join(divergences[:8])
