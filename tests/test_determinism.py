"""Same input, same bytes out (issue 12): across PYTHONHASHSEED, locales (a non-UTF-8 one included),
TZ and working directories; non-Latin-5 text in a Latin-5 locale renders instead of exiting 4."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import OVERLAYS, REPO

LATIN5 = "tr_TR.ISO-8859-9"


@pytest.fixture(scope="module")
def latin5(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for a Latin-5 (ISO-8859-9) locale, compiled with localedef when the system lacks it."""
    probe = subprocess.run([sys.executable, "-c", "import locale; print(locale.getpreferredencoding())"],
                           env={**os.environ, "LC_ALL": LATIN5}, capture_output=True, text=True)
    if probe.stdout.strip().upper().replace("_", "-") == "ISO-8859-9":
        return {"LC_ALL": LATIN5}
    localedef = shutil.which("localedef")
    if localedef is None:
        pytest.skip("no tr_TR.ISO-8859-9 locale and no localedef to build one")
    folder = tmp_path_factory.mktemp("locales")
    made = subprocess.run([localedef, "-i", "tr_TR", "-f", "ISO-8859-9", str(folder / LATIN5)],
                          capture_output=True, text=True)
    if not (folder / LATIN5).exists():
        pytest.skip(f"localedef could not build {LATIN5}: {made.stderr.strip()[:200]}")
    return {"LC_ALL": LATIN5, "LOCPATH": str(folder)}


def run(args: list[str], cwd: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER", "LC_", "LANG",
                                                                     "PYTHONIOENCODING", "PYTHONUTF8"))}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "renderer", *args], cwd=cwd, env={**env, **extra},
                          capture_output=True)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("det") / "repo"
    shutil.copytree(OVERLAYS, root)
    (root / ".git").mkdir()
    cluster = root / "clusters" / "gpu-apt-01" / "cluster.yaml"
    # Text no Latin-5 terminal can show: it must still come out as the same UTF-8 bytes.
    cluster.write_text(cluster.read_text() + "manifests+:\n  - apiVersion: v1\n    kind: ConfigMap\n"
                       "    metadata: {name: greeting, namespace: tenant-example}\n"
                       "    data: {text: \"日本語 — ☃ ünïcödé\"}\n", encoding="utf-8")
    return root


def test_render_bytes_do_not_depend_on_the_environment(fleet: Path, latin5: dict[str, str], tmp_path: Path) -> None:
    args = ["render", "--all", str(fleet)]
    reference = run(args, fleet, {"LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0", "TZ": "UTC"})
    assert reference.returncode == 0, reference.stderr.decode()
    assert "日本語 — ☃".encode() in reference.stdout
    variants = [
        {"PYTHONHASHSEED": "1"}, {"PYTHONHASHSEED": "random"}, {"PYTHONHASHSEED": "4242", "TZ": "Asia/Tokyo"},
        {"TZ": "America/St_Johns", "LC_ALL": "C"}, {"LANG": "POSIX"}, {**latin5, "TZ": "Pacific/Chatham"},
    ]
    for extra in variants:
        for cwd in (fleet, fleet / "clusters", tmp_path):
            got = run(args, cwd, extra)
            assert got.returncode == 0, (extra, got.stderr.decode(errors="replace"))
            assert got.stdout == reference.stdout, (extra, cwd)


def test_a_refusal_in_a_latin5_locale_is_a_refusal(fleet: Path, latin5: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(fleet, root)
    cluster = root / "clusters" / "gpu-apt-01" / "cluster.yaml"
    cluster.write_text(cluster.read_text() + "vlans: [{name: \"日本\", id: 1}]\n", encoding="utf-8")
    got = run(["render", str(root / "clusters" / "gpu-apt-01")], root, latin5)
    assert got.returncode == 3 and got.stdout == b""
    assert b"error[OVL-SCHEMA]" in got.stderr and b"Traceback" not in got.stderr
