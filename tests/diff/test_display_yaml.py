"""One YAML display writer for ``diff`` (issue 31 item 5): the same bytes whether PyYAML (the live
extra) is importable or not, and every string a YAML 1.1 reader (kubectl, go-yaml v2) would read as a
boolean, a number or a null is quoted, so a diff pasted into a manifest means what it showed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from renderer.diff.report import to_yaml
from tests.conftest import REPO

# Strings that YAML 1.1 resolves to another type when written plain (yaml.org/type/bool, int, null).
YAML11_LOOKALIKES = ["yes", "Yes", "no", "NO", "on", "off", "On", "y", "n", "Y", "~", "null", "0755", "0x1F",
                     "1_000", "12:30", "1e3", ".5", "true", "False"]
CLUSTER = "overlays/clusters/vlan-apt-01"


@pytest.mark.parametrize("text", YAML11_LOOKALIKES)
def test_a_yaml11_lookalike_is_quoted(text: str) -> None:
    shown = to_yaml({"x": text})
    assert shown in (f'x: "{text}"\n', f"x: '{text}'\n"), shown


def test_keys_sorted_and_multiline_strings_literal() -> None:
    assert to_yaml({"b": 1, "a": {"d": "line1\nline2\n", "c": "plain"}}) == \
        "a:\n  c: plain\n  d: |\n    line1\n    line2\nb: 1\n"


def _diff(snapshot: Path, block_pyyaml: bool) -> subprocess.CompletedProcess[str]:
    prelude = "import sys; sys.modules['yaml'] = None; " if block_pyyaml else ""  # `import yaml` raises ImportError
    code = prelude + "from renderer.cli import main; main(prog_name='cozy-render')"
    return subprocess.run([sys.executable, "-c", code, "diff", CLUSTER, "--snapshot", str(snapshot), "--color", "never"],
                          cwd=REPO, capture_output=True, text=True, check=False)


def test_diff_is_the_same_with_and_without_pyyaml(tmp_path: Path) -> None:
    pytest.importorskip("yaml", reason="this environment has no PyYAML: nothing to compare with")
    rendered = subprocess.run([sys.executable, "-m", "renderer", "render", CLUSTER, "-o", "json"], cwd=REPO,
                              capture_output=True, text=True, check=True).stdout
    live = json.loads(rendered)
    annotations = live["items"][0]["metadata"].setdefault("annotations", {})
    annotations.update({f"k{i}": text for i, text in enumerate(YAML11_LOOKALIKES)})
    annotations["config"] = "line1\nline2\n"
    snapshot = tmp_path / "live.json"
    snapshot.write_text(json.dumps(live), encoding="utf-8")
    with_pyyaml, without = _diff(snapshot, False), _diff(snapshot, True)
    assert with_pyyaml.returncode == without.returncode == 1, (with_pyyaml.stderr, without.stderr)
    assert with_pyyaml.stdout == without.stdout
    assert '-    k0: "yes"\n' in with_pyyaml.stdout and '-    k12: "0755"\n' in with_pyyaml.stdout
    assert "-    config: |\n-      line1\n" in with_pyyaml.stdout
