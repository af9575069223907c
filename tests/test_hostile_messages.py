"""No path, name, key or value from input reaches a terminal or a CI log raw (issue 25 item 10).

One overlay tree whose layer file, cluster folder and ConfigMap value hold a newline, a GitHub
``::error`` workflow command, a terminal escape sequence, a bidirectional override and a C1 control,
and whose refused cluster holds a 100 KB value; one cluster folder's name is not UTF-8 (stdout is
UTF-8: ``ls`` and ``check -o json|github`` crashed on it). Every reporter that can show them (findings
as text, GitHub annotations and JSON; explain, ``explain --rendered``, ``inputs``, ``ls``,
``render --annotate``, ``render --check`` and ``diff``, each in its formats) runs in a real child process, and no output may
hold a raw control character, a forged workflow command or the long value in full (renderer/escape.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

EVIL = "x\n::error file=forged.yml,line=1::forged\x1b[2J\u202e\x85\x9b31m"
LONG = "v" * 100_000
NOT_UTF8 = os.fsdecode(b"latin-\xff-name")  # a folder name that is not UTF-8: a lone surrogate in Python
HEAD = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"
RAW = ("\x1b", "\u202e", "\x85", "\x9b", "\r", "\udcff")


def _yaml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\x1b", "\\e") \
        .replace("\u202e", "\\u202e").replace("\x85", "\\x85").replace("\x9b", "\\x9b") + '"'


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile-messages") / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "base").mkdir()
    (root / "base" / f"{EVIL}.yaml").write_text(HEAD + "host: {os: apt}\nplatform: {variant: isp-full-generic}\n")
    (root / "base" / f"bad{EVIL}.yaml").write_text(HEAD + f"host: {{os: {_yaml_string(EVIL + LONG)}}}\n")
    layer = _yaml_string(f"../../base/{EVIL}.yaml")
    manifest = ("manifests:\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: m, namespace: tenant-a}, "
                f"data: {{k: {_yaml_string(EVIL)}}}}}\n")
    for name, text in {
        "c1": HEAD + f"metadata: {{name: c1}}\ninherits: [{layer}]\n" + manifest,
        "c2": HEAD + f"metadata: {{name: c2}}\ninherits: [{layer}, {_yaml_string(f'../../base/bad{EVIL}.yaml')}]\n",
        EVIL: HEAD + f"metadata: {{name: c1}}\ninherits: [{layer}]\n",
        NOT_UTF8: HEAD + f"metadata: {{name: c1}}\ninherits: [{layer}]\n",
    }.items():
        (root / "clusters" / name).mkdir(parents=True)
        (root / "clusters" / name / "cluster.yaml").write_text(text)
    rendered = _run(["render", "clusters/c1", "-o", "json"], root)
    live = json.loads(rendered.stdout)
    for item in live["items"]:
        item["metadata"].setdefault("labels", {})["changed"] = EVIL
    live["items"].append({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "orphan" + EVIL.replace("\n", "-"), "namespace": "tenant-a",
                                       "labels": {"app.kubernetes.io/managed-by": "cozy-render",
                                                  "render.cozystack.io/cluster": "c1"}}})
    (root / "live.json").write_text(json.dumps(live))
    written = _run(["render", "clusters/c1", "--out", "rendered/c1"], root)
    assert written.returncode == 0, written.stderr
    # a committed file --check names: its name not UTF-8 and holding an escape, its line a C1 control
    (root / "rendered" / "c1" / os.fsdecode(b"extra-\xff\x1b[2J.yaml")).write_bytes(b"x: \xc2\x9b31m\n")
    return root


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER", "NO_COLOR"))}
    env |= {"PYTHONPATH": str(REPO), "COZY_RENDER_CACHE": "off"}
    return subprocess.run([sys.executable, "-m", "renderer", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, encoding="utf-8", errors="surrogateescape", timeout=120, check=False)


COMMANDS = {
    "render (refusal, text)": ["render", "clusters/c2"],
    "render refused folder": ["render", f"clusters/{EVIL}"],
    "check --all text": ["check", "--all", "."],
    "check --all github": ["check", "--all", ".", "-o", "github"],
    "check --all json": ["check", "--all", ".", "-o", "json"],
    "explain": ["explain", "clusters/c1"],
    "explain json": ["explain", "clusters/c1", "-o", "json"],
    "explain --rendered": ["explain", "clusters/c1", "--rendered"],
    "explain --rendered json": ["explain", "clusters/c1", "--rendered", "-o", "json"],
    "inputs": ["inputs", "clusters/c1"],
    "inputs --all": ["inputs", "--all", "."],
    "inputs json": ["inputs", "clusters/c1", "-o", "json"],
    "ls": ["ls", "."],
    "ls json": ["ls", ".", "-o", "json"],
    "render --annotate": ["render", "clusters/c1", "--annotate"],
    "diff": ["diff", "clusters/c1", "--snapshot", "live.json"],
    "diff json": ["diff", "clusters/c1", "--snapshot", "live.json", "-o", "json"],
    "render": ["render", "clusters/c1"],
    "render --check": ["render", "clusters/c1", "--out", "rendered/c1", "--check"],
    "render --check json": ["render", "clusters/c1", "--out", "rendered/c1", "--check", "-o", "json"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_reporter_prints_input_raw(name: str, repo: Path) -> None:
    done = _run(COMMANDS[name], repo)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[-2000:]
    for stream, text in (("stdout", done.stdout), ("stderr", done.stderr)):
        # a manifest stream is data, written as YAML writes it: controls escaped, but a bidirectional
        # override is printable text to YAML (it stays inside its quoted value; annotate's comments escape it)
        data = stream == "stdout" and name.startswith("render") and "refus" not in name and "check" not in name
        for char in RAW:
            assert char not in text or (data and char == "\u202e"), f"{stream} holds {char!r} raw"
        if data:
            comments = [line.split("  # ", 1)[1] for line in text.splitlines() if "  # " in line]
            assert not any(char in c for c in comments for char in RAW)
        for line in text.splitlines():
            assert not line.startswith("::error file=forged"), f"{stream} forged a workflow command: {line[:200]!r}"
        assert LONG[:5000] not in text, f"{stream} echoes a 100 KB value in full"
    if name.endswith("github"):
        assert all(line.startswith(("::error file=", "::warning file=")) for line in done.stdout.splitlines())
    if "json" in name and done.stdout:
        json.loads(done.stdout)
    if name.startswith(("render (refusal", "check --all text", "render refused")):
        assert done.stderr.count("\n") == len([ln for ln in done.stderr.splitlines() if "error[" in ln
                                               or "warning[" in ln or ln.startswith("cozy-render:")])


def test_a_folder_name_cannot_inject_yaml_into_the_all_stream(tmp_path: Path) -> None:
    """``render --all``'s ``# Source: <path>`` comments: a folder holding a newline stays inside its comment."""
    root = tmp_path / "repo"
    tree = root / "team\nkind: Secret\n#"
    (root / ".git").mkdir(parents=True)
    (tree / "clusters" / "c1").mkdir(parents=True)
    (tree / "clusters" / "c1" / "cluster.yaml").write_text(
        HEAD + "metadata: {name: c1}\nhost: {os: apt}\nplatform: {variant: isp-full-generic}\n")
    done = _run(["render", "--all", str(tree)], root)
    assert done.returncode == 0, done.stderr
    sources = [line for line in done.stdout.splitlines() if line.startswith("# Source: ")]
    assert sources and all(line == "# Source: team\\nkind: Secret\\n#/clusters/c1/cluster.yaml" for line in sources)
    assert "\nkind: Secret\n" not in done.stdout
