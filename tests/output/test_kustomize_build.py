"""Every sample cluster's `render --out` directory builds with the real `kubectl kustomize`.

Flux applies rendered/<cluster> through kustomize (its own kustomization.yaml included), so the
directory must build, and build to exactly the objects `render` prints: same set, same values and
types (a quoted "7445" must stay a string). Skipped, with the reason, where kubectl is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import OVERLAYS

KUBECTL = shutil.which("kubectl")
SAMPLES = sorted(p.parent.name for p in (OVERLAYS / "clusters").glob("*/cluster.yaml"))


def objects(text: str) -> list[str]:
    """Canonical JSON of each object, sorted: the comparison ignores only order and layout."""
    docs: list[Any] = [d for d in YAML(typ="safe").load_all(text) if d is not None]
    return sorted(json.dumps(d, sort_keys=True) for d in docs)


def test_there_are_samples_to_build() -> None:
    assert len(SAMPLES) >= 4, SAMPLES


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: the real `kubectl kustomize` build is skipped")
@pytest.mark.parametrize("cluster", SAMPLES)
def test_rendered_directory_builds_with_kubectl_kustomize(cli, tmp_path: Path, cluster: str) -> None:
    path = str(OVERLAYS / "clusters" / cluster)
    code, stream, err = cli("render", path)
    assert code == 0, err
    out = tmp_path / cluster
    code, _, err = cli("render", path, "--out", str(out))
    assert code == 0, err
    built = subprocess.run([KUBECTL, "kustomize", str(out)], capture_output=True, text=True, timeout=60,
                           check=False)
    assert built.returncode == 0, built.stderr
    assert objects(built.stdout) == objects(stream)


# The two Flux Kustomizations the README gives for Hubble patch mode, as kustomize overlays over the
# same rendered folder: the first applies everything but the patch objects, the second (dependsOn the
# first) only them. Flux's .spec.patches are kustomize patches, so kubectl kustomize builds the same.
PATCH_CLUSTER = Path(__file__).parents[1] / "cases" / "hubble-patch" / "repo" / "clusters" / "hubble-patch"
FLUX_SPLIT = {
    "platform": "render.cozystack.io/ownership=patch",
    "patches": "render.cozystack.io/ownership!=patch",
}


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH: the real `kubectl kustomize` build is skipped")
def test_flux_split_of_patch_objects_builds(cli, tmp_path: Path) -> None:
    cluster = str(PATCH_CLUSTER)
    rendered = tmp_path / "rendered" / "c1"
    code, stream, err = cli("render", cluster)
    assert code == 0, err
    assert cli("render", cluster, "--out", str(rendered))[0] == 0
    built: dict[str, list[str]] = {}
    for name, selector in FLUX_SPLIT.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources: [../rendered/c1]\npatches:\n  - target: {{annotationSelector: {selector}}}\n"
            "    patch: |\n      $patch: delete\n      apiVersion: v1\n      kind: Any\n"
            "      metadata:\n        name: any\n")
        result = subprocess.run([KUBECTL, "kustomize", str(folder)], capture_output=True, text=True, timeout=60,
                                check=False)
        assert result.returncode == 0, result.stderr
        built[name] = objects(result.stdout)
    patch_objects = [o for o in objects(stream) if '"render.cozystack.io/ownership": "patch"' in o]
    assert [json.loads(o)["metadata"]["name"] for o in patch_objects] == ["cozystack.networking"]
    assert built["patches"] == patch_objects
    assert sorted(built["platform"] + built["patches"]) == objects(stream)
