"""check_objects on rendered clusters: located SCHEMA findings, the render path, kubeconform, export."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from renderer.check.schemas import catalog, check_objects
from renderer.errors import ERROR, RenderError
from tests.check.schemas import corpus
from tests.conftest import OVERLAYS
from tests.helpers import emitted, render

DATA = Path(__file__).parent / "data"

CLUSTER = """\
apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
metadata: {name: c1}
host: {os: apt}
platform: {variant: isp-full-generic}
packages:
  cozystack.metallb:
    variant: default
    components:
      x:
        enabled: "yes"
manifests: [extra.yaml]
"""

EXTRA = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ds
  namespace: ns1
spec:
  template:
    metadata:
      labels: {app: x}
    spec:
      containers:
        - name: c
          image: busybox:1.37
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: vlan100
  namespace: tenant-example
spec:
  config: '{"cniVersion": "0.3.1", "type": "bridge", "bridge": "br100", "ipam": {}}'
  bridge: br100
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec: {anything: [1, 2]}
"""

# Wrong values are located at the value; a missing or extra key at the key (sorted as text).
EXPECTED_BUILTIN = [
    "clusters/c1/cluster.yaml:11:18: error[SCHEMA]: Package cozystack.metallb: /spec/components/x/enabled: "
    'got string "yes", want boolean',
    "clusters/c1/extra.yaml:22:3: error[SCHEMA]: NetworkAttachmentDefinition tenant-example/vlan100: /spec: "
    "additional properties 'bridge' not allowed",
    "clusters/c1/extra.yaml:6:1: error[SCHEMA]: DaemonSet ns1/ds: /spec: missing property 'selector'",
]


@pytest.fixture
def no_kubeconform(monkeypatch: pytest.MonkeyPatch) -> None:
    """`auto` must mean builtin here, even on a machine that has kubeconform installed."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if not (Path(d) / "kubeconform").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(dirs))


@pytest.fixture
def bad_cluster(repo) -> Path:
    return repo({"clusters/c1/cluster.yaml": CLUSTER, "clusters/c1/extra.yaml": EXTRA})


def formatted(findings, root: Path) -> list[str]:
    return sorted(f.format().replace(str(root) + "/", "") for f in findings)


def test_findings_are_located_at_the_overlay_and_manifest_lines(bad_cluster, monkeypatch) -> None:
    monkeypatch.chdir(bad_cluster)
    result = emitted(Path("clusters/c1"))
    findings = check_objects(result, validator="builtin")
    assert all(f.code == "SCHEMA" and f.severity == ERROR for f in findings)
    assert formatted(findings, bad_cluster) == EXPECTED_BUILTIN


def test_cli_render_refuses_a_wrong_typed_package_field(bad_cluster, cli, monkeypatch, no_kubeconform) -> None:
    monkeypatch.chdir(bad_cluster)
    code, out, err = cli("render", "clusters/c1")
    assert code == 3 and out == ""
    for line in EXPECTED_BUILTIN:
        assert line in err.splitlines()


def test_render_passes_the_kubernetes_version_and_refuses_an_unbundled_one(bad_cluster) -> None:
    with pytest.raises(RenderError) as info:
        render(bad_cluster / "clusters/c1", kubernetes_version="1.19", validator="builtin")
    (finding,) = info.value.findings
    assert finding.code == "SCHEMA" and "no bundled schemas for Kubernetes '1.19'" in finding.message
    with pytest.raises(RenderError) as info:
        render(bad_cluster / "clusters/c1", kubernetes_version="1.30", validator="builtin")
    assert {f.code for f in info.value.findings} >= {"SCHEMA"}


@pytest.mark.parametrize("cluster", sorted(p.parent.name for p in (OVERLAYS / "clusters").glob("*/cluster.yaml")))
def test_bundled_sample_overlays_validate(cluster) -> None:
    result = emitted(OVERLAYS / "clusters" / cluster)
    assert check_objects(result, validator="builtin") == []


def test_valid_examples_as_extra_manifests_validate(repo) -> None:
    names = ["gpu-operator-talos-nvidia-driver-compat-daemonset.yaml",
             "gpu-operator-talos-dcgm-custom-metrics-configmap.yaml", "vlan100-network-attachment-definition.yaml",
             "tenant-kubernetes-gpu-operator-hami.yaml"]
    files = {f"clusters/c1/{n}": (corpus.EXAMPLES / n).read_text() for n in names}
    files["clusters/c1/cluster.yaml"] = CLUSTER.replace('"yes"', "true").replace("[extra.yaml]", json.dumps(names))
    root = repo(files)
    result = emitted(root / "clusters/c1")
    assert {e.kind for e in result.objects} >= {"DaemonSet", "ConfigMap", "NetworkAttachmentDefinition", "Kubernetes"}
    assert check_objects(result, validator="builtin") == []


def test_package_with_namespace_is_pkg01s_business_not_the_schemas(repo) -> None:
    # examples/metallb-package-frrk8s-with-namespace.yaml: metadata is `type: object` in the CRD.
    name = "metallb-package-frrk8s-with-namespace.yaml"
    root = repo({f"clusters/c1/{name}": (corpus.EXAMPLES / name).read_text(),
                 "clusters/c1/cluster.yaml": CLUSTER.replace('"yes"', "true").replace("extra.yaml", name)
                 .replace("packages:\n  cozystack.metallb:", "packages:\n  cozystack.other:")})
    result = emitted(root / "clusters/c1")
    assert check_objects(result, validator="builtin") == []


def test_unknown_validator_is_a_programming_error(bad_cluster) -> None:
    result = emitted(bad_cluster / "clusters/c1")
    with pytest.raises(ValueError, match="validator must be one of"):
        check_objects(result, validator="kubeval")


# --- kubeconform ---------------------------------------------------------------------------------

FAKE = """#!{python}
# A stand-in for kubeconform v0.7.0: logs its arguments and the schema files it was given, prints a
# report in kubeconform's `-output json` format, exits like kubeconform (1 when anything is invalid).
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
schemas = Path(args[args.index("-schema-location") + 1])
log = {{"args": args, "schemas": sorted(str(p.relative_to(schemas)) for p in schemas.rglob("*.json")),
        "objects": sorted(p.name for p in Path(args[-1]).iterdir())}}
Path(os.environ["FAKE_KUBECONFORM_LOG"]).write_text(json.dumps(log))
report = Path(os.environ["FAKE_KUBECONFORM_REPORT"]).read_text()
sys.stdout.write(report.replace("{{objects}}", args[-1]).replace("{{schemas}}", str(schemas)))
sys.exit(int(os.environ.get("FAKE_KUBECONFORM_EXIT", "1")))
"""


@pytest.fixture
def fake_kubeconform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kubeconform"
    script.write_text(FAKE.format(python=sys.executable))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_KUBECONFORM_LOG", str(tmp_path / "log.json"))
    monkeypatch.setenv("FAKE_KUBECONFORM_REPORT", str(DATA / "kubeconform-invalid.json"))
    return tmp_path / "log.json"


def test_kubeconform_report_is_mapped_to_located_findings(bad_cluster, fake_kubeconform, monkeypatch) -> None:
    monkeypatch.chdir(bad_cluster)
    result = emitted(Path("clusters/c1"))
    # Output order (Namespaces, CRDs, platform, Packages, then by group): the report names 000004.json for the NAD.
    assert [e.kind for e in result.objects] == ["Package", "Package", "DaemonSet", "Widget",
                                                "NetworkAttachmentDefinition"]
    findings = check_objects(result)  # auto: the fake is on PATH
    assert formatted(findings, bad_cluster) == [
        "clusters/c1/cluster.yaml:11:18: error[SCHEMA]: Package cozystack.metallb: /spec/components/x/enabled: "
        "got string, want boolean",
        "clusters/c1/extra.yaml:22:3: error[SCHEMA]: NetworkAttachmentDefinition tenant-example/vlan100: /spec: "
        "additional properties 'bridge' not allowed",
        "clusters/c1/extra.yaml:6:1: error[SCHEMA]: DaemonSet ns1/ds: /spec: missing property 'selector'",
    ]
    log = json.loads(fake_kubeconform.read_text())
    args = log["args"]
    assert args[args.index("-kubernetes-version") + 1] == catalog.DEFAULT_KUBERNETES_VERSION
    assert args[args.index("-output") + 1] == "json" and "-ignore-missing-schemas" in args
    assert log["objects"] == ["000000.json", "000001.json", "000002.json", "000003.json", "000004.json"]
    assert {"v1.33.0-standalone/package-cozystack-v1alpha1.json", "v1.33.0-standalone/daemonset-apps-v1.json",
            "v1.33.0-standalone/networkattachmentdefinition-k8s-v1.json"} <= set(log["schemas"])


def test_kubeconform_clean_report(bad_cluster, fake_kubeconform, monkeypatch, tmp_path) -> None:
    report = tmp_path / "clean.json"
    report.write_text('{\n  "resources": []\n}\n')
    monkeypatch.setenv("FAKE_KUBECONFORM_REPORT", str(report))
    monkeypatch.setenv("FAKE_KUBECONFORM_EXIT", "0")
    result = emitted(bad_cluster / "clusters/c1")
    assert check_objects(result, validator="kubeconform", kubernetes_version="1.30") == []
    args = json.loads(fake_kubeconform.read_text())["args"]
    assert args[args.index("-kubernetes-version") + 1] == "1.30.0"


@pytest.mark.parametrize("exit_code, report, message", [
    ("2", '{"resources": []}', "kubeconform exited 2"),
    ("1", "failed opening cache folder x: stat x: no such file or directory", "printed no JSON report"),
])
def test_kubeconform_failures_are_reported_not_raised(bad_cluster, fake_kubeconform, monkeypatch, tmp_path,
                                                      exit_code, report, message) -> None:
    path = tmp_path / "report.txt"
    path.write_text(report)
    monkeypatch.setenv("FAKE_KUBECONFORM_REPORT", str(path))
    monkeypatch.setenv("FAKE_KUBECONFORM_EXIT", exit_code)
    result = emitted(bad_cluster / "clusters/c1")
    with pytest.raises(RenderError) as info:
        check_objects(result, validator="kubeconform")
    (finding,) = info.value.findings
    assert finding.code == "SCHEMA" and message in finding.message and "--validator builtin" in finding.message


def test_kubeconform_requested_but_absent(bad_cluster, no_kubeconform) -> None:
    result = emitted(bad_cluster / "clusters/c1")
    with pytest.raises(RenderError, match="kubeconform is not on PATH"):
        check_objects(result, validator="kubeconform")
    assert len(check_objects(result)) == 3  # auto falls back to builtin


@pytest.mark.skipif(shutil.which("kubeconform") is None,
                    reason="kubeconform is not on PATH (not installable from this machine's registries; "
                           "see reference §1.1): the fake-binary tests above cover the runner")
def test_real_kubeconform_agrees_with_builtin(bad_cluster) -> None:
    result = emitted(bad_cluster / "clusters/c1")
    real = check_objects(result, validator="kubeconform")
    ours = check_objects(result, validator="builtin")
    where = sorted((str(f.location), f.message.split(": ")[1]) for f in real)
    assert where == sorted((str(f.location), f.message.split(": ")[1]) for f in ours)


# --- export --------------------------------------------------------------------------------------

def test_schemas_export_writes_both_layouts(cli, tmp_path) -> None:
    code, out, err = cli("schemas", "export", str(tmp_path / "s"))
    assert code == 0, err
    files = sorted(str(p.relative_to(tmp_path / "s")) for p in (tmp_path / "s").rglob("*.json"))
    crd_ids = ["networkattachmentdefinition-k8s-v1", "package-cozystack-v1alpha1", "packagesource-cozystack-v1alpha1"]
    expected = ["cozystack.io/package_v1alpha1.json", "cozystack.io/packagesource_v1alpha1.json",
                "k8s.cni.cncf.io/networkattachmentdefinition_v1.json"]
    for folder in ("master-standalone", "master-standalone-strict", "v1.33.0-standalone", "v1.33.0-standalone-strict"):
        expected += [f"{folder}/{sid}.json" for sid in crd_ids]
    assert files == sorted(expected)
    assert (tmp_path / "s/master-standalone/package-cozystack-v1alpha1.json").read_bytes() == \
        (catalog.CRD_SCHEMA_DIR / "cozystack.io/package_v1alpha1.json").read_bytes()
    assert "{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json" in out


def test_schemas_export_core_kinds_for_a_version(cli, tmp_path) -> None:
    code, _, err = cli("schemas", "export", str(tmp_path), "-k", "1.30", "--core")
    assert code == 0, err
    daemonset = json.loads((tmp_path / "v1.30.0-standalone/daemonset-apps-v1.json").read_text())
    assert "$schema" not in daemonset and daemonset["definitions"]
    assert not (tmp_path / "v1.30.0-standalone-strict/daemonset-apps-v1.json").exists()
    assert not (tmp_path / "master-standalone").exists()


def test_schemas_export_refuses_an_unbundled_version(cli, tmp_path) -> None:
    code, out, err = cli("schemas", "export", str(tmp_path), "-k", "1.12")
    assert code == 2 and out == "" and "no bundled schemas for Kubernetes '1.12'" in err


def test_schemas_export_onto_a_file(cli, tmp_path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    code, out, err = cli("schemas", "export", str(target))
    assert code == 2 and out == "" and "is a file" in err


# --- start-up cost -------------------------------------------------------------------------------

def _modules_after(code: str) -> list[str]:
    probe = "from pathlib import Path\n" + code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[3]).stdout
    return json.loads(out.splitlines()[-1])


def test_importing_the_package_loads_no_validator() -> None:
    loaded = _modules_after("import renderer.check.schemas")
    assert not [m for m in loaded if "jsonschema" in m or m.startswith("renderer.check.schemas.")]


def test_a_render_imports_only_the_validators_of_kinds_present() -> None:
    sample = OVERLAYS / "clusters" / "vlan-apt-01"
    loaded = _modules_after(f"from renderer.pipeline import Options, run; run(Path({str(sample)!r}), Options(validator='builtin')).one()")
    assert "jsonschema" not in loaded and "renderer.check.schemas.store" not in loaded
    assert [m for m in loaded if m.startswith("renderer._generated.schema_validators.")] == [
        "renderer._generated.schema_validators.crd__networkattachmentdefinition_k8s_v1",
        "renderer._generated.schema_validators.crd__package_cozystack_v1alpha1",
    ]
