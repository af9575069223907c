"""`cozy-render check`: output formats, exit codes (0 clean, 1 findings, 3 bad input) and --strict;
`cozy-render rules` listing and explaining."""

from __future__ import annotations

import json

import pytest

HEADER = """\
apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
metadata: {name: c1}
host: {os: apt}
"""
CLEAN = HEADER + "platform: {variant: isp-full}\n"
# Line 8 col 27 is the namespace value (PKG-01); the Package (its key is at 7:3) is co-managed
# with the platform (PLT-11).
WITH_ERROR = HEADER + """\
platform: {variant: isp-full}
packages:
  cozystack.metallb:
    metadata: {namespace: cozy-system}
    variant: default
"""
# Line 9 col 25 is the enabledPackages entry that has no effect (PLT-08).
WITH_WARNING = HEADER + """\
platform:
  variant: isp-full
  values:
    bundles:
      enabledPackages: [cozystack.metallb]
"""
METALLB_PLT08 = ("cozystack.metallb in enabledPackages has no effect on this variant "
                 "(it is a default package: only disabledPackages affects it).")
PKG01 = ("Package is cluster-scoped: remove metadata.namespace (the API server drops it, and a GitOps diff "
         "will never converge).")


@pytest.fixture
def cluster(repo, monkeypatch: pytest.MonkeyPatch):
    """Write one cluster overlay and run from the repo root, so locations print as relative paths."""

    def make(text: str, extra: dict[str, str] | None = None) -> str:
        root = repo({"clusters/c1/cluster.yaml": text, **(extra or {})})
        monkeypatch.chdir(root)
        return "clusters/c1"

    return make


MODE = "cozy-render: platform chart: built-in model (--chart helm renders the real chart)\n"


def test_clean_cluster_exits_0_saying_only_the_chart_mode(cli, cluster) -> None:
    path = cluster(CLEAN)
    assert cli("check", path) == (0, "", MODE)
    code, out, err = cli("check", "-o", "json", path)
    assert (code, err) == (0, "")
    assert json.loads(out) == {"apiVersion": "cozy-render/v1", "kind": "Findings",
                               "chart": {"mode": "model", "asked": "model", "helm": None, "helmVersion": None},
                               "summary": {"clusters": 1, "errors": 0, "warnings": 0, "exitCode": 0},
                               "findings": []}
    assert cli("check", "--strict", "-o", "github", path) == (0, "", MODE)


def test_error_text_output_and_exit_1(cli, cluster) -> None:
    code, out, err = cli("check", cluster(WITH_ERROR))
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        MODE.strip(),
        "clusters/c1/cluster.yaml:7:3: warning[PLT-11]: cozystack.metallb is co-managed with the platform "
        "release; platform-rendered keys will be re-asserted on every platform upgrade.",
        f"clusters/c1/cluster.yaml:8:27: error[PKG-01]: {PKG01}",
    ]


def test_json_output(cli, cluster) -> None:
    code, out, err = cli("check", "-o", "json", cluster(WITH_ERROR))
    assert (code, err) == (1, "")
    findings = json.loads(out)["findings"]
    assert findings[1] == {"cluster": "c1", "code": "PKG-01", "severity": "error", "message": PKG01,
                           "file": "clusters/c1/cluster.yaml", "line": 8, "column": 27}
    assert [f["code"] for f in findings] == ["PLT-11", "PKG-01"]


def test_github_annotations(cli, cluster) -> None:
    code, out, err = cli("check", "-o", "github", cluster(WITH_ERROR))
    assert (code, err) == (1, MODE)
    assert out.splitlines()[1] == f"::error file=clusters/c1/cluster.yaml,line=8,col=27,title=PKG-01::{PKG01}"
    assert out.splitlines()[0].startswith("::warning file=clusters/c1/cluster.yaml,line=7,col=3,title=PLT-11::")


def test_warnings_pass_unless_strict(cli, cluster) -> None:
    path = cluster(WITH_WARNING)
    line = f"clusters/c1/cluster.yaml:9:25: warning[PLT-08]: {METALLB_PLT08}"
    assert cli("check", path) == (0, "", MODE + line + "\n")
    assert cli("check", "--strict", path) == (1, "", MODE + line + "\n")
    code, out, _ = cli("check", "--strict", "-o", "json", path)
    assert code == 1 and json.loads(out)["findings"][0]["code"] == "PLT-08"


def test_bad_input_exits_3_without_stdout(cli, cluster) -> None:
    code, out, err = cli("check", cluster(CLEAN + "manifests: [missing.yaml]\n"))
    assert (code, out) == (3, "")
    assert err.startswith(MODE)
    assert len(err.splitlines()) == 2 and "error[OVL-PATH]" in err and "missing.yaml" in err


def test_bad_input_in_json_is_a_finding_of_its_cluster(cli, cluster) -> None:
    """Issue 17: -o json is always valid JSON, an input error included (exit 3, the input class)."""
    code, out, err = cli("check", "-o", "json", cluster(CLEAN + "manifests: [missing.yaml]\n"))
    assert (code, err) == (3, "")
    document = json.loads(out)
    assert [(f["cluster"], f["code"]) for f in document["findings"]] == [("c1", "OVL-PATH")]
    assert document["summary"]["exitCode"] == 3


def test_render_refuses_the_error_the_check_reports(cli, cluster) -> None:
    code, out, err = cli("render", cluster(WITH_ERROR))
    assert (code, out) == (3, "")
    assert f"clusters/c1/cluster.yaml:8:27: error[PKG-01]: {PKG01}" in err.splitlines()


def test_check_all_reports_every_cluster(cli, repo, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo({"clusters/a/cluster.yaml": CLEAN.replace("name: c1", "name: a"),
                 "clusters/b/cluster.yaml": WITH_WARNING.replace("name: c1", "name: b")})
    monkeypatch.chdir(root)
    code, out, err = cli("check", "--all", "-o", "json", ".")
    assert code == 0 and err == ""
    assert [(f["cluster"], f["file"], f["code"]) for f in json.loads(out)["findings"]] == [
        ("b", "clusters/b/cluster.yaml", "PLT-08")]
    assert json.loads(out)["summary"]["clusters"] == 2


def test_rules_lists_and_explains(cli) -> None:
    code, out, err = cli("rules")
    assert (code, err) == (0, "")
    ids = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert ids.index("PKG-02") < ids.index("PKG-10") and "PLT-12" in ids
    assert ids.index("NET-13") < ids.index("OVL-YAML") < ids.index("CMP-PARAMS")
    assert "Package / PackageSource API:" in out and "Argo CD Config Management Plugin:" in out
    code, out, _ = cli("rules", "plt-07")
    assert code == 0 and out.startswith("PLT-07 (warning): ") and "cozystack.bootbox" in out
    assert "Sources:" in out
    code, out, err = cli("rules", "PLT-99")
    assert (code, out) == (3, "") and "error[CLI-RULES]: no rule PLT-99" in err


def test_strict_help_is_documented(cli) -> None:
    code, out, _ = cli("check", "--help")
    assert code == 0 and "--strict" in out and "github" in out
