"""`cozy-render effective`, `platforms` and the chart check (renderer.effective), with real helm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from renderer.platform_chart import DEFAULT_VERSION, chart_dir
from tests.conftest import OVERLAYS, overlay_doc
from tests.helpers import render

SAMPLES = sorted(p for p in (OVERLAYS / "clusters").iterdir() if (p / "cluster.yaml").is_file())
VARIANT_FILES = {"default": [], "isp-full": ["values-isp-full.yaml"], "isp-hosted": ["values-isp-hosted.yaml"],
                 "isp-full-generic": ["values-isp-full-generic.yaml"]}


def _helm_packages(helm: str, version: str, variant: str, values: dict[str, Any], tmp: Path) -> dict[str, str]:
    """What real helm emits, computed here independently of renderer.effective: the bundles and
    sources of a scratch copy, layered values.yaml, values-<variant>.yaml, the platform values."""
    copy = tmp / f"chart-{version}"
    if not copy.exists():
        shutil.copytree(chart_dir(version), copy)
        for item in (copy / "templates").iterdir():
            if item.name not in ("_helpers.tpl", "sources.yaml", "bundles"):
                item.unlink()
    user = tmp / "values.json"
    user.write_text(json.dumps(values))
    args = [helm, "template", "cozystack-platform", str(copy), "-n", "cozy-system", "-f", str(copy / "values.yaml")]
    args += [a for f in VARIANT_FILES[variant] for a in ("-f", str(copy / f))] + ["-f", str(user)]
    done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=120)
    from ruamel.yaml import YAML

    docs = [d for d in YAML(typ="safe").load_all(done.stdout) if isinstance(d, dict) and d.get("kind") == "Package"]
    return {d["metadata"]["name"]: d["spec"]["variant"] for d in docs}


def _pinned(sample: Path, version: str, tmp_path: Path) -> Path:
    """A copy of the sample tree with the sample's cluster pinned to ``version``."""
    repo = tmp_path / "repo"
    shutil.copytree(OVERLAYS, repo / "overlays")
    (repo / ".git").mkdir()
    cluster = repo / "overlays" / "clusters" / sample.name / "cluster.yaml"
    text = cluster.read_text(encoding="utf-8")
    if "\nplatform:\n" in text:
        text = text.replace("\nplatform:\n", f"\nplatform:\n  version: {version}\n", 1)
    else:
        text += f"platform:\n  version: {version}\n"
    cluster.write_text(text, encoding="utf-8")
    return cluster.parent


@pytest.mark.parametrize("version", ["v1.6.2", "main-3c780ac"])
@pytest.mark.parametrize("sample", SAMPLES, ids=[p.name for p in SAMPLES])
def test_effective_json_is_helm_plus_our_own(sample: Path, version: str, helm: str, cli, tmp_path: Path) -> None:
    """Acceptance (issue 19): every sample passes effective = helm at both vendored versions."""
    sample = _pinned(sample, version, tmp_path)
    code, out, _ = cli("effective", str(sample), "-o", "json", "--helm", helm)
    assert code == 0
    listed = {p["name"]: p["variant"] for p in json.loads(out)["packages"]}
    result = render(sample)
    platform = next(e for e in result.objects if e.is_package("cozystack.cozystack-platform"))
    spec = platform.obj["spec"]
    assert result.plan.facts.version == version
    expected = _helm_packages(helm, version,
                              spec["variant"], spec.get("components", {}).get("platform", {}).get("values", {}),
                              tmp_path)
    for e in result.objects:
        if e.is_package():
            expected[e.name] = (e.obj.get("spec") or {}).get("variant") or expected.get(e.name, "default")
    assert listed == expected


def test_effective_marks_origins(helm: str, cli) -> None:
    code, out, _ = cli("effective", str(OVERLAYS / "clusters" / "gpu-apt-01"), "-o", "json", "--helm", helm)
    assert code == 0
    origins = {p["name"]: p["origin"] for p in json.loads(out)["packages"]}
    assert origins["cozystack.cozystack-platform"] == "cozy-render"
    assert origins["cozystack.metallb"] == "co-managed"  # a packages: entry patching a platform Package
    assert origins["cozystack.cert-manager"] == "platform"
    assert json.loads(out)["assumedAbsent"]


def test_a_manifests_package_of_a_platform_name_is_contested_as_check_says(helm: str, cli, cluster) -> None:
    """Issue 19 item 5, issue 35: effective and check agree on the origin. A manifests: Package is
    emitted as a plain object (no patch ownership), so it is contested, not co-managed (PLT-11)."""
    metallb = {"apiVersion": "cozystack.io/v1alpha1", "kind": "Package", "metadata": {"name": "cozystack.metallb"},
               "spec": {"variant": "default"}}
    folder = cluster(overlay_doc(platform={"variant": "isp-full"}, manifests=[metallb]))
    code, out, _ = cli("effective", str(folder), "-o", "json", "--helm", helm)
    assert code == 0
    (package,) = [p for p in json.loads(out)["packages"] if p["name"] == "cozystack.metallb"]
    assert package["origin"] == "contested"
    assert "render.cozystack.io/ownership" not in (package["object"]["metadata"].get("annotations") or {})
    # What the platform writes stays on the object (its annotations included).
    from renderer.effective.helm import render_platform

    platform = render_platform(helm, chart_dir("v1.6.2"), "isp-full", {}).packages()["cozystack.metallb"]
    theirs = platform["metadata"].get("annotations") or {}
    assert (package["object"]["metadata"].get("annotations") or {}).items() >= theirs.items()
    code, _, err = cli("check", str(folder))
    assert "warning[PLT-11]: cozystack.metallb is contested with the platform release" in err


def test_effective_table_and_yaml_say_what_was_assumed(helm: str, cli) -> None:
    sample = str(OVERLAYS / "clusters" / "hubble-generic-01")
    code, table, _ = cli("effective", sample, "-o", "table", "--helm", helm)
    assert code == 0 and table.startswith("NAME ") and "ORIGIN" in table.splitlines()[0]
    assert "assumed absent offline" in table and "ConfigMap cozy-system/cozystack" in table
    code, text, _ = cli("effective", sample, "--helm", helm)
    assert code == 0 and "# origin: platform\n" in text and "kind: Package" in text


def test_effective_without_helm_is_one_line_saying_how_to_get_it(cli, tmp_path: Path) -> None:
    code, out, err = cli("effective", str(OVERLAYS / "clusters" / "gpu-apt-01"), "--chart", "helm",
                         "--helm", str(tmp_path / "no-helm"))
    assert code > 1 and out == ""
    (line,) = err.splitlines()
    assert "error[PLT-HELM]" in line and "https://helm.sh/docs/intro/install/" in line and "--helm PATH" in line
    assert ".ci/" not in line  # no file of this repository: an install has none (issue 31)


def test_effective_without_helm_on_path(cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The default judge is the model (as for check): no helm needed, and the output says who judged.
    Asking for the real chart without a helm is one PLT-HELM line."""
    monkeypatch.setenv("PATH", str(tmp_path))
    code, out, err = cli("effective", str(OVERLAYS / "clusters" / "gpu-apt-01"), "-o", "table")
    assert code == 0 and "predicted by the built-in model" in out and "platform chart" not in err
    code, out, err = cli("effective", str(OVERLAYS / "clusters" / "gpu-apt-01"), "--chart", "helm")
    assert code == 3 and out == "" and err.count("\n") == 1 and "no helm on PATH" in err


def test_effective_model_and_helm_name_the_same_packages(cli, helm: str) -> None:
    """The model's effective set names every Package helm renders, with the same variants and origins
    (the values the chart computes from lookups are what a prediction leaves out)."""
    for sample in sorted((OVERLAYS / "clusters").iterdir()):
        sets = []
        for judge in (["--chart", "model"], ["--helm", helm]):
            code, out, _ = cli("effective", str(sample), "-o", "json", *judge)
            assert code == 0, sample
            document = json.loads(out)
            sets.append([(p["name"], p["variant"], p["origin"]) for p in document["packages"]])
            assert document["chart"]["mode"] == judge[1] if judge[0] == "--chart" else "helm"
        assert sets[0] == sets[1], sample.name


def test_platforms_lists_the_vendored_versions(cli) -> None:
    code, out, _ = cli("platforms")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["main-3c780ac", "v1.6.2"]
    assert any("(default)" in line and line.startswith(DEFAULT_VERSION) for line in lines)


def test_effective_refuses_an_unshipped_version(helm: str, cli, cluster) -> None:
    folder = cluster(overlay_doc(platform={"variant": "isp-full", "version": "v9.9.9"}))
    code, _, err = cli("effective", str(folder), "--helm", helm)
    assert code == 3 and "error[PLT-VERSION]" in err and "--platform-chart" in err


def test_effective_with_a_users_chart_copy(helm: str, cli, cluster, tmp_path: Path) -> None:
    copy = tmp_path / "my-chart"
    shutil.copytree(chart_dir("v1.6.2"), copy)
    folder = cluster(overlay_doc(platform={"variant": "isp-full", "version": "v1.6.3-rc"}))
    code, out, _ = cli("effective", str(folder), "-o", "json", "--helm", helm, "--platform-chart", str(copy))
    assert code == 0
    packages = {p["name"]: p for p in json.loads(out)["packages"]}
    assert packages["cozystack.multus"]["components"] == []  # v1.6.2 does not stage CNI plugins
    assert "cozystack.kubevirt" in packages


# ---- the six failing value sets of issue 10: refused by render without helm, by check with the chart's message ----

MAIN = "main-3c780ac"
FAILING = [
    {"bundles": {"system": {"enabled": "true"}, "iaas": {"enabled": True, "gpuOperatorVariant": "container"}}},
    {"bundles": {"system": {"enabled": "yes"}, "iaas": {"enabled": True, "gpuOperatorVariant": "passthrough"}}},
    {"publishing": {"apiServerEndpoint": "10.0.0.5:6443"}},
    {"authentication": {"oidc": False}},
    {"authentication": {"oidc": {"enabled": "true"}}},
    {"networking": {"encryption": True}},
]


@pytest.mark.parametrize("values", FAILING, ids=[json.dumps(v) for v in FAILING])
def test_each_failing_set_is_refused(values: dict[str, Any], helm: str, cli, cluster,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer.effective.helm import render_platform

    variant = "default" if "gpuOperatorVariant" in json.dumps(values) else "isp-full-generic"
    # The six sets were found on main (networking.encryption is main-only: v1.6.2 never reads it).
    folder = cluster(overlay_doc(platform={"variant": variant, "version": MAIN, "values": values}))
    monkeypatch.setenv("PATH", str(Path(helm).parent.parent / "nothing-here"))
    code, _, err = cli("render", str(folder))
    assert code == 3 and "error[" in err  # without helm: the Python model (Go truthiness, Go template errors)
    failure = render_platform(helm, chart_dir(MAIN), variant, values).failure
    assert failure is not None
    monkeypatch.setenv("PATH", f"{Path(helm).parent}{os.pathsep}/usr/bin:/bin")
    code, _, err = cli("check", str(folder))
    assert code == 1
    # The chart's exact message: PLT-CHART, or the model's finding that already carries it (reported once).
    assert failure.message in err or failure.message.split(" at <", 1)[-1] in err, (failure.message, err)


def test_check_reports_a_chart_failure_the_model_does_not_know(helm: str, cluster, tmp_path: Path) -> None:
    """A user's chart with a guard the generated model has never seen: PLT-CHART, at the overlay line."""
    from renderer.effective.choice import choose
    from renderer.pipeline import Options, run

    copy = tmp_path / "chart"
    shutil.copytree(chart_dir(DEFAULT_VERSION), copy)
    iaas = copy / "templates" / "bundles" / "iaas.yaml"
    iaas.write_text('{{- if .Values.resources.cpuAllocationRatio }}{{ fail "resources.cpuAllocationRatio: '
                    'a guard only this chart has" }}{{ end }}\n' + iaas.read_text())
    folder = cluster(overlay_doc(platform={"variant": "isp-full", "values": {"resources": {"cpuAllocationRatio": 4}}}))
    result = run(folder, Options(refuse=False, chart=choose("helm", helm), platform_chart=copy)).one()
    (finding,) = [f for f in result.findings if f.code == "PLT-CHART"]
    assert "a guard only this chart has" in finding.message
    assert finding.location == result.overlay.locate(("platform", "values", "resources", "cpuAllocationRatio"))


def test_plt_11_12_have_one_body_whichever_source_answers(helm: str, cluster) -> None:
    """The model and helm are two sources of one view; the rules are the same functions (issue 17 item 2)."""
    from renderer.check.rules import run_rules
    from renderer.effective.chart_check import CO_MANAGEMENT_RULES, platform_view
    from renderer.effective.choice import choose
    from renderer.pipeline import Options, run

    folder = cluster(overlay_doc(platform={"variant": "isp-full", "version": "main-3c780ac"}, packages={
        "cozystack.multus": {"variant": "default", "components": {"multus": {"values": {"stageCniPlugins": False}}}},
        "cozystack.cozystack-scheduler": {"variant": "default"}}))
    result = render(folder, refuse=False)
    model = sorted((f.code, f.message) for f in result.findings if f.code in CO_MANAGEMENT_RULES)
    judged = run(folder, Options(refuse=False, chart=choose("helm", helm))).one()
    chart = sorted((f.code, f.message) for f in judged.findings if f.code in CO_MANAGEMENT_RULES)
    assert chart == model and {code for code, _ in model} == {"PLT-11", "PLT-12"}  # agree, message for message
    view = platform_view(result, helm=helm)
    assert view.source == "helm" and view.version == "main-3c780ac"
    assert sorted((f.code, f.message) for f in run_rules(result, only=CO_MANAGEMENT_RULES, platform=view)) == chart
    # Nothing is removed from the render's own findings any more.
    assert sorted((f.code, f.message) for f in result.findings if f.code in CO_MANAGEMENT_RULES) == model


def test_check_reads_helms_packages_through_the_view(helm: str, cluster, monkeypatch, cli) -> None:
    """`check` with helm on PATH: one PLT-11 per conflict, decided once (no model copy next to it)."""
    folder = cluster(overlay_doc(platform={"variant": "isp-full", "version": "main-3c780ac"}, packages={
        "cozystack.multus": {"variant": "default", "components": {"multus": {"values": {"stageCniPlugins": False}}}}}))
    monkeypatch.setenv("PATH", f"{Path(helm).parent}{os.pathsep}/usr/bin:/bin")
    code, _, err = cli("check", str(folder))
    assert code == 1 and err.count("error[PLT-11]") == 1, err


def test_check_on_v1_6_2_does_not_apply_main_only_rules(cluster, cli) -> None:
    values = {"networking": {"stageCniPlugins": "maybe"}}
    main = cluster(overlay_doc(platform={"variant": "isp-full", "version": "main-3c780ac", "values": values}))
    code, _, err = cli("check", str(main))
    assert code == 1 and "error[PLT-10]" in err
    old = cluster(overlay_doc(platform={"variant": "isp-full", "version": "v1.6.2", "values": values}))
    code, _, err = cli("check", str(old))
    assert "PLT-10" not in err


@pytest.mark.parametrize("version", ["v1.6.2", "main-3c780ac"])
def test_packagesources_read_from_the_chart_are_what_helm_emits(version: str, helm: str) -> None:
    from renderer.effective.helm import WITH_SOURCES, chart_sources, offline_chart, template, values_files
    from renderer.platform_chart.model import chart_model

    with offline_chart(chart_dir(version), WITH_SOURCES) as copy:
        emitted = template(helm, copy, values_files(copy, "isp-full"), {}).sources()
    assert sorted(emitted) == sorted(chart_sources(chart_dir(version))) == sorted(chart_model(version).sources)


def test_effective_packages_is_the_set_effective_prints(helm: str, cli) -> None:
    """The function diff --effective calls gives the same set as the command."""
    from renderer.effective.packages import effective_packages

    sample = OVERLAYS / "clusters" / "vlan-apt-01"
    code, out, _ = cli("effective", str(sample), "-o", "json", "--helm", helm)
    assert code == 0
    printed = [(p["name"], p["variant"], p["origin"]) for p in json.loads(out)["packages"]]
    assert [(p.name, p.variant, p.origin) for p in effective_packages(render(sample), helm=helm)] == printed


def test_effective_refuses_a_folder_that_is_no_chart(helm: str, cli, tmp_path: Path) -> None:
    code, _, err = cli("effective", str(OVERLAYS / "clusters" / "vlan-apt-01"), "--helm", helm,
                       "--platform-chart", str(tmp_path))
    assert code == 3 and "error[PLT-VERSION]" in err and "no Chart.yaml" in err


# ---- issue 19 item 2: failures outside the bundle conditions, caught without helm at both versions ----

BREAKING = [
    {"publishing": {"ingressName": 5, "proxyProtocol": True}},
    {"publishing": {"ingressName": True, "proxyProtocol": True}},
    {"publishing": {"apiServerEndpoint": "https://api example.org:6443"}},
    {"publishing": {"apiServerEndpoint": "https://api.example.org:https"}},
    {"publishing": {"apiServerEndpoint": "https://api.example.org%zz:6443"}},
]


@pytest.mark.parametrize("version", ["v1.6.2", "main-3c780ac"])
@pytest.mark.parametrize("values", BREAKING, ids=[json.dumps(v) for v in BREAKING])
def test_the_model_quotes_what_helm_fails_with(values: dict[str, Any], version: str, helm: str, cluster) -> None:
    from renderer.effective.chart_check import platform_view
    from renderer.effective.helm import render_platform

    folder = cluster(overlay_doc(platform={"variant": "isp-full-generic", "version": version, "values": values}))
    result = render(folder, refuse=False)
    failure = render_platform(helm, chart_dir(version), "isp-full-generic", values).failure
    assert failure is not None
    model = [f for f in result.findings if f.code == "PLT-13"]
    assert len(model) == 1 and failure.message in model[0].message, (failure.message, model)
    assert platform_view(result, helm=helm).findings == ()  # the chart's failure is reported once


CLUSTER_ONLY = [
    {"registries": {"mirrors": ["docker.io"]}},
    {"registries": {"mirrors": {"docker.io": "mirror.example.org"}}},
    {"registries": {"mirrors": {"docker.io": {"endpoints": "http://m"}}}},
    {"registries": {"mirrors": {"docker.io": {"endpoints": ["http://m"]}}}},
    {"registries": {"mirrors": {"docker.io": {"endpoints": ["http://m"]}}, "config": ["a"]}},
    {"registries": {"mirrors": {"docker.io": {"endpoints": ["http://m"]}}, "config": {"http://m": "x"}}},
    {"registries": {"mirrors": {"docker.io": {"endpoints": ["http://m"]}}, "config": {"http://m": {"tls": "x"}}}},
    {"registries": {"mirrors": {"docker.io": {"endpoints": ["http://m"]}},
                    "config": {"http://m": {"tls": {"insecureSkipVerify": True}}}}},
    {"publishing": {"certificates": {"solver": 5}}},
    {"publishing": {"certificates": {"solver": True}}},
    {"publishing": {"certificates": {"solver": None}}},
    {"publishing": {"certificates": {"solver": 5, "wildcardSecretName": "mine"}}},
]


@pytest.mark.parametrize("version", ["v1.6.2", "main-3c780ac"])
@pytest.mark.parametrize("values", CLUSTER_ONLY, ids=[json.dumps(v) for v in CLUSTER_ONLY])
def test_templates_that_run_only_in_a_cluster_fail_as_the_model_says(values: dict[str, Any], version: str,
                                                                      helm: str) -> None:
    """apps.yaml and containerd-registry-secret.yaml, rendered by real helm (their lookups find nothing,
    as a fresh cluster's would), against the model's replay of their value conversions."""
    from renderer.effective.helm import offline_chart, template, values_files
    from renderer.load.variants import Variants
    from renderer.platform_chart.model import chart_model
    from renderer.resolve.platform import PlatformFacts

    with offline_chart(chart_dir(version), ("_helpers.tpl", "apps.yaml", "containerd-registry-secret.yaml")) as copy:
        rendered = template(helm, copy, values_files(copy, "isp-full"), values)
    facts = PlatformFacts(Variants().catalogue(), "isp-full", values, version=version)
    model = chart_model(version).cluster_template_problems(facts.chart_values)
    if rendered.failure is None:
        assert model == []
    else:
        (problem,) = model
        assert (rendered.failure.template, rendered.failure.line) == (problem.template, problem.line)
        assert rendered.failure.message == f'executing "cozy-platform/{problem.template}" {problem.message}'


# Issue 35 item 1: `check --chart helm` and `effective` render every template of the release, not only
# bundles/, with repository.yaml's lookup of the operator's flux source answered (helm.ANSWERED_LOOKUPS).
_OUTSIDE_BUNDLES = [
    ({"scheduling": ["zone"]}, 'executing "cozy-platform/templates/scheduling.yaml" at '
                               "<.Values.scheduling.globalAppTopologySpreadConstraints>: can't evaluate field "
                               "globalAppTopologySpreadConstraints in type interface {}"),
    ({"sourceRef": "cozystack-platform"}, 'executing "cozy-platform/templates/repository.yaml" at '
                                          "<$sourceRef.kind>: can't evaluate field kind in type string"),
    ({"sourceRef": {"kind": "GitRepository", "name": "mine", "namespace": "flux-system"}},
     "Source repository flux-system/mine of kind GitRepository not found in namespace flux-system"),
]


@pytest.mark.parametrize("version", ["v1.6.2", "main-3c780ac"])
@pytest.mark.parametrize(("values", "message"), _OUTSIDE_BUNDLES, ids=["scheduling", "sourceRef-string", "sourceRef-other"])
def test_templates_outside_bundles_fail_check_and_effective(helm: str, cli, cluster, version: str,
                                                           values: dict[str, Any], message: str) -> None:
    folder = cluster(overlay_doc(platform={"variant": "isp-full", "version": version, "values": values}))
    code, _, err = cli("check", str(folder), "--chart", "helm", "--helm", helm)
    assert code == 1 and f"error[PLT-CHART]: {message}" in err
    code, out, err = cli("effective", str(folder), "--helm", helm)
    assert (code, out) == (3, "") and message in err and "error[PLT-CHART]" in err


def test_the_operators_own_source_is_found_so_the_release_renders(helm: str, cli, cluster) -> None:
    # values.yaml's sourceRef is the OCIRepository the operator creates: answered present, no failure
    folder = cluster(overlay_doc(platform={"variant": "isp-full"}))
    code, _, err = cli("check", str(folder), "--chart", "helm", "--helm", helm)
    assert code == 0 and "PLT-CHART" not in err
