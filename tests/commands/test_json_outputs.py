"""Every ``-o json`` is one document that validates against its published schema (issue 31 item 4):
each command with a JSON output, on one sample cluster and with ``--all`` on the sample tree, read
with ``json.loads`` (one document, never a stream of them) and checked with a stock Draft 7 validator
against ``cozy-render schema output NAME``. Every document of cozy-render's own shape carries
``apiVersion: cozy-render/v1`` and a ``kind``; ``render`` stays a Kubernetes ``v1`` List.

The doctor's schema and the PR preview's (``diff --base``) are published by their own areas
(renderer/doctor, renderer/preview); a schema missing there fails here by name, never skips.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema
import pytest

from renderer.commands.schemas import OUTPUTS, output_schema_file
from tests.conftest import OVERLAYS, REPO
from tests.doctor.fake_state import doctor_fake  # noqa: F401 - the doctor's API fake, a pytest fixture

ONE = "overlays/clusters/gpu-apt-01"  # a container-route GPU cluster: every command has something to say
SAMPLES = sorted(p.name for p in (OVERLAYS / "clusters").iterdir() if (p / "cluster.yaml").is_file())


class Case(NamedTuple):
    schema: str  # the NAME of `cozy-render schema output NAME`
    args: tuple[str, ...]
    kind: str  # the document's kind ("List" for render)
    needs: str = ""  # "helm", "doctor" (the API fake) or "git" (a repository with history)


CASES = {
    "render": Case("render", ("render", ONE), "List"),
    "render --all": Case("render", ("render", "overlays", "--all"), "List"),
    "render --annotate": Case("explain", ("render", ONE, "--annotate"), "Explanation"),
    "render --annotate --all": Case("explain", ("render", "overlays", "--all", "--annotate"), "ExplanationList"),
    "render --check": Case("render-check", ("render", ONE, "--out", "{tmp}/one", "--check"), "StaleFiles"),
    "render --check --all": Case("render-check", ("render", "overlays", "--all", "--out", "{tmp}/all", "--check"),
                                 "StaleFiles"),
    "check": Case("check", ("check", ONE), "Findings"),
    "check --all": Case("check", ("check", "overlays", "--all"), "Findings"),
    "explain": Case("explain", ("explain", ONE), "Explanation"),
    "explain --rendered": Case("explain", ("explain", ONE, "--rendered"), "Explanation"),
    "inputs": Case("inputs", ("inputs", ONE), "Inputs"),
    "inputs --all": Case("inputs", ("inputs", "overlays", "--all"), "Inputs"),
    "ls": Case("ls", ("ls", "overlays"), "Clusters"),
    "rules": Case("rules", ("rules",), "Rules"),
    "rules CODE": Case("rules", ("rules", "GPU-05"), "Rules"),
    "diff --snapshot": Case("diff", ("diff", ONE, "--snapshot", "{tmp}/live.json"), "Diff"),
    "diff --all --against": Case("diff", ("diff", "overlays", "--all", "--against", "{tmp}/rendered"), "Diff"),
    "effective": Case("effective", ("effective", ONE, "--helm", "{helm}"), "Effective", "helm"),
    "effective --all": Case("effective", ("effective", "overlays", "--all", "--helm", "{helm}"), "EffectiveList",
                            "helm"),
    "doctor": Case("doctor", ("doctor", ONE, "--kubeconfig", "{kubeconfig}"), "", "doctor"),
    "doctor --all": Case("doctor", ("doctor", "overlays", "--all", "--kubeconfig", "{kubeconfig}"), "", "doctor"),
    "diff --base": Case("preview", ("diff", "--base", "HEAD~1", "--head", "HEAD", ONE), "", "git"),
    "diff --base --all": Case("preview", ("diff", "--base", "HEAD~1", "--all", "overlays"), "", "git"),
}
# Published by the areas that own them (renderer/doctor, renderer/preview): while they are not in
# renderer/data/output-schemas/ these cases are expected to fail, and say why.
OTHER_AREAS = {"doctor": "renderer/doctor publishes the doctor schema",
               "preview": "renderer/preview publishes the diff --base schema"}


def _params() -> list[Any]:
    out = []
    for name, case in CASES.items():
        marks = []
        if case.schema in OTHER_AREAS and not output_schema_file(case.schema).is_file():
            marks.append(pytest.mark.xfail(reason=f"no schema {case.schema!r} yet: {OTHER_AREAS[case.schema]}",
                                           strict=False))
        out.append(pytest.param(name, case, id=name, marks=marks))
    return out


def _helm() -> str:
    found = shutil.which("helm") or shutil.which("helm", path=str(REPO / ".ci" / "bin"))
    if not found:
        pytest.skip("effective needs helm 3: none on PATH or in .ci/bin (bash .ci/run fetches it)")
    return found


def _git_repository(root: Path) -> Path:
    """The samples in a repository with two commits (the second touches one cluster's file)."""
    shutil.copytree(OVERLAYS, root / "overlays")
    shutil.copytree(REPO / "variants", root / "variants")

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=root,
                       check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    cluster = root / ONE / "cluster.yaml"
    cluster.write_text(cluster.read_text(encoding="utf-8") + "# a change the preview traces to this cluster\n",
                       encoding="utf-8")
    git("commit", "-q", "-am", "head")
    return root


def _placeholders(case: Case, cli: Callable[..., tuple[int, str, str]], tmp_path: Path,
                  request: pytest.FixtureRequest) -> dict[str, str]:
    values = {"tmp": str(tmp_path)}
    if case.needs == "helm":
        values["helm"] = _helm()
    if case.needs == "doctor":
        from tests.doctor import fake_state

        fake = request.getfixturevalue("doctor_fake")
        fake.load(fake_state.healthy_container())
        values["kubeconfig"] = str(fake.kubeconfig(tmp_path / "kubeconfig", contexts=SAMPLES))
    if "{tmp}/live.json" in case.args:
        code, out, err = cli("render", ONE, "-o", "json")
        assert code == 0, err
        (tmp_path / "live.json").write_text(out, encoding="utf-8")
    if "{tmp}/rendered" in case.args:
        code, _, err = cli("render", "overlays", "--all", "--out", str(tmp_path / "rendered"))
        assert code == 0, err
    return values


@pytest.mark.loopback  # doctor reads the API fake on 127.0.0.1
@pytest.mark.parametrize(("name", "case"), _params())
def test_json_output_is_one_valid_document(cli, name: str, case: Case, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    schema_file = output_schema_file(case.schema)
    assert schema_file.is_file(), f"{name}: no published schema {case.schema!r} ({schema_file})"
    assert case.schema in OUTPUTS
    if case.needs == "git":
        monkeypatch.chdir(_git_repository(tmp_path / "repo"))
    else:
        monkeypatch.chdir(REPO)
    values = _placeholders(case, cli, tmp_path, request)
    code, out, err = cli(*(a.format(**values) for a in case.args), "-o", "json")
    assert code in (0, 1), f"{name}: exit {code}: {err}"
    assert "Traceback" not in err
    document = json.loads(out)  # one document: a second one after it is a JSONDecodeError ("Extra data")
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(document)]
    assert errors == [], f"{name}: {errors[:5]}"
    if case.schema == "render":
        assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    else:
        assert document["apiVersion"] == "cozy-render/v1", name
        assert document["kind"] == case.kind or (not case.kind and document["kind"]), name


def test_every_published_schema_has_a_case() -> None:
    """A schema added without a command in CASES would go untested."""
    assert set(OUTPUTS) <= {c.schema for c in CASES.values()}


def test_every_all_form_covers_every_sample(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """One document, yet every cluster: render --all's List holds each sample's objects."""
    monkeypatch.chdir(REPO)
    code, out, err = cli("render", "overlays", "--all", "-o", "json")
    assert code == 0, err
    labelled = {o["metadata"].get("labels", {}).get("render.cozystack.io/cluster") for o in json.loads(out)["items"]}
    assert set(SAMPLES) <= labelled
    for sample in SAMPLES[:2]:  # and in cluster order, each cluster's objects as render CLUSTER gives them
        one = json.loads(cli("render", f"overlays/clusters/{sample}", "-o", "json")[1])["items"]
        assert all(o in json.loads(out)["items"] for o in one)
