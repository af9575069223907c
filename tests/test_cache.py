"""The render cache (COZY_RENDER_CACHE_DIR): a hit replays exactly what a fresh render prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

PROBE = ("import sys, atexit; atexit.register(lambda: sys.stderr.write('|LOADED=%s' % "
         "','.join(sorted(m for m in ('ruamel.yaml', 'jinja2', 'fastjsonschema', 'click') if m in sys.modules))));"
         "from renderer.entry import main; sys.argv[0] = 'cozy-render'; main()")


@pytest.fixture
def fleet(samples: Path) -> Path:
    return samples


def run(args: list[str], cwd: Path, cache: Path | None, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "COZY_RENDER"))}
    base["PYTHONPATH"] = str(REPO)
    if cache is not None:
        base["COZY_RENDER_CACHE_DIR"] = str(cache)
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True,
                          env={**base, **(env or {})})
    err, _, loaded = proc.stderr.rpartition("|LOADED=")
    return proc.returncode, proc.stdout, err + "|" + loaded


def test_hit_replays_the_fresh_render_without_loading_libraries(fleet: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    fresh = run(["render", "clusters/gpu-apt-01"], fleet, None)
    miss = run(["render", "clusters/gpu-apt-01"], fleet, cache)
    hit = run(["render", "clusters/gpu-apt-01"], fleet, cache)
    assert fresh[0] == miss[0] == hit[0] == 0
    assert fresh[1] == miss[1] == hit[1]
    assert "warning[PLT-11]" in fresh[2]
    assert fresh[2].split("|")[0] == miss[2].split("|")[0] == hit[2].split("|")[0]
    assert "ruamel.yaml" in miss[2].split("|")[1]
    assert hit[2].endswith("|")  # no YAML, template, schema or CLI library imported on a hit
    assert len(list(cache.glob("*.json"))) == 1


@pytest.mark.parametrize("changed", ["base/cluster.yaml", "extra/namespace.yaml", "clusters/gpu-apt-01/cluster.yaml"])
def test_any_input_change_is_a_miss(fleet: Path, tmp_path: Path, changed: str) -> None:
    cache = tmp_path / "cache"
    first = run(["render", "clusters/gpu-apt-01"], fleet, cache)
    path = fleet / changed
    path.write_text(path.read_text().replace("tenant-example", "tenant-other").replace("10.96.0.0/16", "10.97.0.0/16")
                    .replace("hami: false", "hami: false\n# edited"))
    second = run(["render", "clusters/gpu-apt-01"], fleet, cache)
    assert second == run(["render", "clusters/gpu-apt-01"], fleet, None)
    assert first[1] != second[1] or changed.startswith("clusters/")


def test_cmp_parameters_are_part_of_the_key(fleet: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    app = fleet / "clusters" / "gpu-apt-01"
    params = {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "vars", "map": {"domain": "a.example"}}])}
    a = run(["cmp", "generate"], app, cache, params)
    b = run(["cmp", "generate"], app, cache)
    again = run(["cmp", "generate"], app, cache, params)
    assert "a.example" in a[1] and "a.example" not in b[1] and again[1] == a[1]


def test_errors_are_not_cached(fleet: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cluster = fleet / "clusters" / "vgpu-apt-01" / "cluster.yaml"
    cluster.write_text(cluster.read_text().replace("os: apt", "os: talos"))  # vgpu on Talos: GPU-05
    first = run(["render", "clusters/vgpu-apt-01"], fleet, cache)
    assert first[0] == 3 and "error[GPU-05]" in first[2]
    assert not list(cache.glob("*.json"))


def test_damaged_entries_and_escaping_inputs_fall_back_to_a_render(fleet: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    good = run(["render", "clusters/gpu-apt-01"], fleet, cache)
    (entry,) = cache.glob("*.json")
    entry.write_text("{not json")
    assert run(["render", "clusters/gpu-apt-01"], fleet, cache)[1] == good[1]
    data = json.loads(entry.read_text())
    data["inputs"]["../outside.yaml"] = "0" * 64
    data["stdout"] = "poisoned"
    entry.write_text(json.dumps(data))
    assert run(["render", "clusters/gpu-apt-01"], fleet, cache)[1] == good[1]


def test_different_working_directories_do_not_share_messages(fleet: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    from_root = run(["render", "clusters/gpu-apt-01"], fleet, cache)
    from_cluster = run(["render", "."], fleet / "clusters" / "gpu-apt-01", cache)
    assert from_root[1] == from_cluster[1]
    assert "clusters/gpu-apt-01/cluster.yaml:" in from_root[2]
    assert from_cluster[2].startswith("cluster.yaml:")
