"""Manifest files are read exactly as kubectl reads them (issue 12, class 7).

kubectl apply/create decode YAML with sigs.k8s.io/yaml (go-yaml v2, then JSON): YAML 1.1 booleans,
Go integer syntax, no sexagesimal numbers (``at: 12:30`` stays "12:30"), timestamps kept as text,
integral floats become integers. ``kubectl label --local -f FILE -o json`` runs exactly that decoder
with no cluster, so each tricky scalar is compared with what real kubectl makes of it.

``kubectl kustomize`` (kyaml, on go-yaml v3) agrees on everything but two: the YAML 1.1 boolean words
(``yes``, ``on``, ``n``...), which it keeps as strings, and plain timestamps, which it rewrites as
RFC 3339 (``2001-12-14`` becomes ``2001-12-14T00:00:00Z``). cozy-render follows kubectl apply on both
(a boolean; the text as written) and quotes such strings on output, so every tool reads what it
writes the same way.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from renderer.errors import RenderError
from renderer.load.yamlio import load_documents
from renderer.output.yaml import dump_one

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: the kubectl comparison is skipped")

SCALARS = [
    "12:30", "1:20:30", "190:20:30", "yes", "Yes", "YES", "no", "on", "Off", "y", "N", "true", "True", "FALSE",
    "tRUE", "~", "null", "Null", "NuLL", "", "0755", "0o17", "0O17", "0x1F", "0X1f", "-0x1F", "0b101", "-0b101",
    "0b2", "0o8", "08", "09.5", "00", "1_000", "1__0", "_1", "0x_1F", "1_000.5", "1e3", "1E3", "1.5e+3", "6.02e23",
    ".5", "+.5", "5.", "-0", "+12", "0.0", "100.0", "-1.5", "1e", "1.", "0x1.8p1", "3.14159265358979323846",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551615",
    "123456789012345678901234567890", "1e400", "9" * 400, "2001-12-14", "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10", "2001-13-45", "0b", "0x", "=", "<<x", "1,000", "1.2.3", "v1", "10Gi", "0.5Gi",
    "+inf", "infinity", "nan", "NaN", ".NaNx", "-.5e-3",
]


def _document(values: list[str]) -> str:
    lines = ["apiVersion: example.com/v1", "kind: Tricky", "metadata:", "  name: t", "spec:"]
    lines += [f"  k{i}: {value}" for i, value in enumerate(values)]
    return "\n".join(lines) + "\n"


def _kubectl_json(path: Path) -> dict[str, Any]:
    proc = subprocess.run([KUBECTL or "kubectl", "label", "--local", "-f", str(path), "x=y", "-o", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["spec"]


def _ours(text: str) -> dict[str, Any]:
    ((data, _),) = load_documents(text, "t.yaml", yaml11=True)
    return data["spec"]


def _same(a: Any, b: Any) -> bool:
    """JSON equality (kubectl prints through float64 above 2**53, so big integers compare as floats)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b) and (isinstance(a, float) == isinstance(b, float) or abs(float(a)) >= 2**53
                                         or float(a).is_integer())
    return type(a) is type(b) and a == b


def test_tricky_scalars_read_as_kubectl_reads_them(tmp_path: Path) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(_document(SCALARS))
    kubectl, ours = _kubectl_json(file), _ours(file.read_text())
    wrong = {SCALARS[int(k[1:])]: (ours.get(k), v) for k, v in kubectl.items() if not _same(ours.get(k), v)}
    assert wrong == {}, "scalar: (cozy-render, kubectl)"
    assert ours["k0"] == "12:30"


@pytest.mark.parametrize("scalar", [".nan", ".inf", "-.Inf", "+.INF"])
def test_nan_and_infinity_are_refused_as_kubectl_refuses_them(tmp_path: Path, scalar: str) -> None:
    file = tmp_path / "t.yaml"
    file.write_text(_document([scalar]))
    proc = subprocess.run([KUBECTL or "kubectl", "label", "--local", "-f", str(file), "x=y", "-o", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "unsupported value" in proc.stderr
    with pytest.raises(RenderError, match="OVL-YAML"):
        _ours(file.read_text())


def test_kubectl_kustomize_agrees_apart_from_yaml11_booleans_and_timestamps(tmp_path: Path) -> None:
    words = {"yes", "Yes", "YES", "no", "on", "Off", "y", "N"}
    values = [s for s in SCALARS if s not in words and not s.startswith("2001-12-14")]
    (tmp_path / "t.yaml").write_text(_document(values))
    (tmp_path / "kustomization.yaml").write_text("resources: [t.yaml]\n")
    built = subprocess.run([KUBECTL or "kubectl", "kustomize", str(tmp_path)], capture_output=True, text=True,
                           timeout=60)
    assert built.returncode == 0, built.stderr
    (tmp_path / "built.yaml").write_text(built.stdout)
    kustomized, ours = _kubectl_json(tmp_path / "built.yaml"), _ours(_document(values))
    wrong = {values[int(k[1:])]: (ours.get(k), v) for k, v in kustomized.items() if not _same(ours.get(k), v)}
    assert wrong == {}, "scalar: (cozy-render, kubectl kustomize)"


def test_what_we_write_reads_back_the_same_in_kubectl(tmp_path: Path) -> None:
    """Strings that look like YAML 1.1 values are quoted on output, so kubectl reads them back as strings."""
    obj = {"apiVersion": "example.com/v1", "kind": "Tricky", "metadata": {"name": "t"},
           "spec": {f"k{i}": s for i, s in enumerate(SCALARS)}}
    file = tmp_path / "out.yaml"
    file.write_text(dump_one(obj))
    assert _kubectl_json(file) == obj["spec"]
