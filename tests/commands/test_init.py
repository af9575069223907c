"""``cozy-render init``: every combination renders and passes ``check``; never overwrites."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from tests.conftest import OVERLAYS

COMBINATIONS = [(o, g) for o, g in itertools.product(("apt", "talos"), ("none", "default", "vgpu", "container"))
                if (o, g) != ("talos", "vgpu")]
EXTRAS = [[], ["--hubble"], ["--vlan", "100:eno2:tenant-a,tenant-b", "--vlan", "200:eno3:tenant-a"],
          ["--hubble", "--vlan", "300:bond0:tenant-x"]]


@pytest.fixture
def tree(samples: Path) -> Path:
    return samples


@pytest.mark.parametrize(("host_os", "gpu"), COMBINATIONS)
@pytest.mark.parametrize("extra", EXTRAS, ids=["plain", "hubble", "vlans", "hubble+vlan"])
def test_every_combination_renders_and_passes_check(cli, tree: Path, host_os: str, gpu: str,
                                                     extra: list[str]) -> None:
    code, out, err = cli("init", "new-01", "--os", host_os, "--gpu", gpu, *extra, "--root", str(tree))
    assert code == 0, err
    assert out == ""
    written = tree / "clusters" / "new-01" / "cluster.yaml"
    assert "inherits: [../../base/" in written.read_text(encoding="utf-8")
    code, _, err = cli("check", str(written.parent))
    assert code == 0, err
    assert "error[" not in err
    code, stream, _ = cli("render", str(written.parent))
    assert code == 0 and "kind: Package" in stream


def test_talos_inherits_the_talos_base(cli, tree: Path) -> None:
    assert cli("init", "t1", "--os", "talos", "--root", str(tree))[0] == 0
    assert "inherits: [../../base/talos.yaml]" in (tree / "clusters" / "t1" / "cluster.yaml").read_text()


def test_it_refuses_to_overwrite(cli, tree: Path) -> None:
    before = (tree / "clusters" / "vgpu-apt-01" / "cluster.yaml").read_bytes()
    code, out, err = cli("init", "vgpu-apt-01", "--os", "apt", "--root", str(tree))
    assert (code, out) == (3, "")
    assert "error[CLI-INIT]" in err and "never overwrites" in err
    assert (tree / "clusters" / "vgpu-apt-01" / "cluster.yaml").read_bytes() == before


@pytest.mark.parametrize(("args", "message"), [
    (["--os", "talos", "--gpu", "vgpu"], "GPU-05"),
    (["--os", "apt", "--vlan", "100-eno2"], "ID:UPLINK:NAMESPACE"),
    (["--os", "apt", "--vlan", "5000:eno2:ns"], "NET-11"),
])
def test_refused_combinations_write_nothing(cli, tree: Path, args: list[str], message: str) -> None:
    code, _, err = cli("init", "x1", *args, "--root", str(tree))
    assert code == 2 and message in err  # a usage error (issue 23): the arguments, not the inputs
    assert not (tree / "clusters" / "x1").exists()


@pytest.mark.parametrize("name", ["Bad_Name", "Edge_02", "../x"])
def test_a_bad_name_is_a_usage_error(cli, tree: Path, name: str) -> None:
    code, _, err = cli("init", name, "--os", "apt", "--root", str(tree))
    assert code == 2 and "DNS label" in err


def test_without_a_terminal_os_is_required(cli, tree: Path) -> None:
    code, _, err = cli("init", "x1", "--root", str(tree))
    assert code == 2 and "--os" in err


def test_on_a_terminal_with_no_options_it_asks(runner, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from renderer import cli as cli_module

    monkeypatch.setattr(cli_module, "_stdin_is_terminal", lambda: True)
    monkeypatch.chdir(tree)
    result = runner.invoke(cli_module.main, ["init"], input="asked-01\ntalos\ncontainer\ny\n100:eno2:tenant-a\n\n")
    assert result.exit_code == 0, result.stderr
    text = (tree / "clusters" / "asked-01" / "cluster.yaml").read_text(encoding="utf-8")
    assert "os: talos" in text and "variant: container" in text and "hubble:" in text and "id: 100" in text


def test_the_modeline_points_at_a_schema_the_tree_has(cli, tree: Path) -> None:
    (tree / ".cozy").mkdir()
    (tree / ".cozy" / "overlay-layer.schema.json").write_text("{}", encoding="utf-8")
    assert cli("init", "m1", "--os", "apt", "--root", str(tree))[0] == 0
    first = (tree / "clusters" / "m1" / "cluster.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../.cozy/overlay-layer.schema.json"


def test_without_a_schema_in_the_tree_init_writes_the_one_the_modeline_names(cli, tree: Path) -> None:
    """Issue 23: never the unreachable $id nor a virtual environment's path; a path that resolves."""
    from renderer.load.overlay_schema import LAYER_SCHEMA_FILE

    code, _, err = cli("init", "m2", "--os", "apt", "--root", str(tree))
    assert code == 0, err
    cluster = tree / "clusters" / "m2" / "cluster.yaml"
    first = cluster.read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../.cozy/overlay-layer.schema.json"
    written = cluster.parent / first.split("$schema=", 1)[1]
    assert written.read_bytes() == LAYER_SCHEMA_FILE.read_bytes()
    assert "overlay-layer.schema.json" in err


def test_a_schema_at_the_git_root_is_found(cli, tmp_path: Path) -> None:
    """The overlay tree in a subfolder (overlays/) of the Git repository, the schema at the Git root."""
    repo = tmp_path / "repo"
    shutil.copytree(OVERLAYS, repo / "overlays")
    (repo / ".git").mkdir()
    (repo / ".cozy").mkdir()
    (repo / ".cozy" / "overlay-layer.schema.json").write_text("{}", encoding="utf-8")
    tree = repo / "overlays"
    assert cli("init", "m3", "--os", "apt", "--root", str(tree))[0] == 0
    first = (tree / "clusters" / "m3" / "cluster.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../../.cozy/overlay-layer.schema.json"
    assert not (tree / ".cozy").exists()


def test_a_tree_without_bases_gets_a_self_contained_file(cli, tmp_path: Path) -> None:
    tree = tmp_path / "empty"
    (tree / "clusters").mkdir(parents=True)
    (tree / ".git").mkdir()
    code, _, err = cli("init", "solo-01", "--os", "talos", "--gpu", "container", "--root", str(tree))
    assert code == 0, err
    text = (tree / "clusters" / "solo-01" / "cluster.yaml").read_text(encoding="utf-8")
    assert "inherits" not in text and "variant: isp-full " in text


def test_init_writes_the_platform_version_it_chose(cli, tree: Path) -> None:
    """Issue 19 item 1: the cluster says which chart it is judged by (the default: the latest release)."""
    from renderer.platform_chart import DEFAULT_VERSION

    assert cli("init", "v1", "--os", "apt", "--root", str(tree))[0] == 0
    text = (tree / "clusters" / "v1" / "cluster.yaml").read_text()
    assert f"\n  version: {DEFAULT_VERSION}   # " in text and DEFAULT_VERSION == "v1.6.2"


def test_an_unknown_root_is_a_usage_error_not_a_new_tree(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23: `init --root <typo>` used to start a new tree with no base, silently."""
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("init", "edge-01", "--os", "apt", "--root", "overlay")
    assert (code, out) == (2, "") and "error[CLI-INIT]: --root overlay is not a folder" in err
    assert not (tmp_path / "overlay").exists()
