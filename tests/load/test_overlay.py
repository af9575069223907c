"""Loading, layering, validation and templating of overlays (renderer/load/overlay.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from renderer.errors import RenderError
from renderer.load.overlay import load_overlay

HEAD = "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\n"


def cluster(name: str, body: str, inherits: str | None = None) -> str:
    text = HEAD + f"metadata:\n  name: {name}\n"
    if inherits:
        text += f"inherits: [{inherits}]\n"
    return text + body


MINIMAL = "host: {os: apt}\nplatform: {variant: isp-full-generic}\n"


def error_of(path: Path) -> str:
    with pytest.raises(RenderError) as info:
        load_overlay(path)
    return "\n".join(f.format() for f in info.value.findings)


def test_layers_merge_maps_replace_lists_and_null_deletes(repo, monkeypatch) -> None:
    root = repo({
        "base/a.yaml": HEAD + "platform:\n  variant: isp-full\n  values:\n    keep: 1\n    drop: 2\n"
                              "    list: [a, b]\n    nested: {x: 1, y: 2}\nhost: {os: apt}\n",
        "clusters/c1/cluster.yaml": cluster("c1", "platform:\n  values:\n    drop: null\n    list: [c]\n"
                                                  "    nested: {y: 3}\n", "../../base/a.yaml"),
    })
    monkeypatch.chdir(root)
    o = load_overlay(root / "clusters/c1")
    assert o.data["platform"] == {"variant": "isp-full",
                                  "values": {"keep": 1, "list": ["c"], "nested": {"x": 1, "y": 3}}}
    assert str(o.locate(("platform", "values", "keep"))) == "base/a.yaml:6:11"
    assert str(o.locate(("platform", "values", "nested", "y"))) == "clusters/c1/cluster.yaml:10:17"
    assert o.locate(("platform", "values", "drop")) == o.locate(("platform", "values"))


def test_append_marker_extends_inherited_list(repo, monkeypatch) -> None:
    root = repo({
        "base.yaml": HEAD + MINIMAL.replace("isp-full-generic}", "isp-full-generic, values: {l: [a]}}"),
        "clusters/c1/cluster.yaml": cluster("c1", "platform:\n  values:\n    l+: [b, c]\n", "../../base.yaml"),
    })
    monkeypatch.chdir(root)
    o = load_overlay(root / "clusters/c1/cluster.yaml")
    assert o.data["platform"]["values"]["l"] == ["a", "b", "c"]
    assert o.locate(("platform", "values", "l", 2)).path == "clusters/c1/cluster.yaml"
    assert o.locate(("platform", "values", "l", 0)).path == "base.yaml"


def test_append_marker_without_base_is_plain_key(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL + "vlans+: []\n")})
    assert load_overlay(root / "clusters/c1").data["vlans"] == []


def test_inherits_cycle_is_refused(repo, monkeypatch) -> None:
    root = repo({
        "a.yaml": HEAD + "inherits: [b.yaml]\n",
        "b.yaml": HEAD + "inherits: [a.yaml]\n",
        "clusters/c1/cluster.yaml": cluster("c1", MINIMAL, "../../a.yaml"),
    })
    monkeypatch.chdir(root)
    msg = error_of(root / "clusters/c1")
    assert "error[OVL-INHERIT]: inherits cycle: a.yaml -> b.yaml -> a.yaml" in msg
    assert msg.startswith("b.yaml:3:")


def test_missing_inherited_file(repo, monkeypatch) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL, "../../nope.yaml")})
    monkeypatch.chdir(root)
    assert "clusters/c1/cluster.yaml:5:12: error[OVL-PATH]: inherits entry '../../nope.yaml' does not exist" \
        in error_of(root / "clusters/c1")


@pytest.mark.parametrize("ref", ["../../../outside.yaml", "/etc/passwd"])
def test_inherits_cannot_leave_the_repository(repo, ref: str) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL, ref)})
    (root.parent / "outside.yaml").write_text(HEAD)
    assert "error[OVL-PATH]" in error_of(root / "clusters/c1")


def test_symlink_out_of_the_repository_is_refused(repo, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text(HEAD)
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL, "../../link.yaml")})
    os.symlink(secret, root / "link.yaml")
    assert "resolves (through a symlink) outside" in error_of(root / "clusters/c1")


def test_alias_bomb_is_refused(repo) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        bomb += f"{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL + "vars:\n" +
                                                     "".join("  " + line + "\n" for line in bomb.splitlines()))})
    assert "error[OVL-LIMIT]" in error_of(root / "clusters/c1")


def test_huge_file_is_refused(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL + "# " + "x" * (5 * 1024 * 1024) + "\n")})
    assert "error[OVL-LIMIT]: file is" in error_of(root / "clusters/c1")


def test_invalid_yaml_points_at_the_problem(repo, monkeypatch) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", "host: {os: apt\n")})
    monkeypatch.chdir(root)
    assert error_of(root / "clusters/c1").startswith("clusters/c1/cluster.yaml:")


def test_duplicate_keys_are_refused(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL + "host: {os: talos}\n")})
    assert "error[OVL-YAML]" in error_of(root / "clusters/c1")


def test_unknown_key_suggests_the_right_one(repo, monkeypatch) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL + "gpu:\n  varaint: container\n")})
    monkeypatch.chdir(root)
    assert error_of(root / "clusters/c1") == (
        "clusters/c1/cluster.yaml:8:3: error[OVL-SCHEMA]: unknown key 'gpu.varaint'; did you mean 'variant'?"
    )


def test_wrong_enum_and_type(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", "host: {os: ubuntu}\nplatform: {variant: isp-full}\n")})
    assert "host.os: 'ubuntu' is not one of apt, talos" in error_of(root / "clusters/c1")
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL + "gpu: {hami: 'yes'}\n")})
    assert "gpu.hami must be a boolean, got string 'yes'" in error_of(root / "clusters/c1")


def test_required_keys_after_merge(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", "host: {os: apt}\n")})
    assert "missing required key 'platform'" in error_of(root / "clusters/c1")


def test_name_must_match_directory(repo, monkeypatch) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("other", MINIMAL)})
    monkeypatch.chdir(root)
    assert error_of(root / "clusters/c1") == ("clusters/c1/cluster.yaml:4:9: error[OVL-NAME]: metadata.name 'other' "
                                              "must equal the cluster directory name 'c1'")


def test_templates_see_vars_and_cluster(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster(
        "c1", MINIMAL.replace("isp-full-generic}", "isp-full-generic, values: {a: '{{ vars.d }}/{{ cluster.name }}/"
                                                   "{{ cluster.host.os }}/{{ cluster.platform.variant }}'}}")
        + "vars: {d: example.org}\n")})
    assert load_overlay(root / "clusters/c1").data["platform"]["values"]["a"] == "example.org/c1/apt/isp-full-generic"


@pytest.mark.parametrize("template, message", [
    ("{{ vars.nope }}", "undefined in template"),
    ("{{ ''.__class__.__mro__ }}", "refused by the sandbox"),
    ("{{ cycler }}", "undefined in template"),
    ("{{ 'a' * 100000000 }}", "result too large"),
    ("{{ 9 ** 99999 }}", "integer result larger than"),
    ("{{ ((9 ** 999) ** 999) ** 999 }}", "integer result larger than"),
    ("{{ 'x' | center(900000000) }}", "center width too large"),
    ("{{ '%0900000000d' | format(1) }}", "format width too large"),
    ("{{ '%0900000000d' % 1 }}", "format width too large"),
    ("{{ '{:0900000000}'.format(1) }}", "format width too large"),
    ("{{ 'x'.ljust(900000000) }}", "ljust width too large"),
    ("{{ ('x' * 999999) | replace('x', 'yy') }}", "too large"),
    ("{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}", "steps"),
    ("{{ [1, 2] | random }}", "No filter named 'random'"),
    ("{{ vars.items }}", "only strings, numbers, booleans"),
    ("{% for x in %}", "template syntax error"),
])
def test_template_errors_and_sandbox(repo, monkeypatch, template: str, message: str) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster("c1", MINIMAL + f"manifests:\n  - \"{template}\"\n")})
    monkeypatch.chdir(root)
    text = error_of(root / "clusters/c1")
    assert text.startswith("clusters/c1/cluster.yaml:8:5: error[OVL-TEMPLATE]: "), text
    assert message in text


def test_sandbox_blocks_attribute_escape(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster(
        "c1", MINIMAL + "vars: {s: x}\nmanifests: [\"{{ vars.s.__class__.__base__.__subclasses__() }}\"]\n")})
    assert "error[OVL-TEMPLATE]" in error_of(root / "clusters/c1")


def test_root_falls_back_to_folder_above_clusters(tmp_path: Path) -> None:
    (tmp_path / "ov/clusters/c1").mkdir(parents=True)
    (tmp_path / "ov/base.yaml").write_text(HEAD + MINIMAL)
    (tmp_path / "ov/clusters/c1/cluster.yaml").write_text(cluster("c1", "", "../../base.yaml"))
    o = load_overlay(tmp_path / "ov/clusters/c1")
    assert o.root == (tmp_path / "ov").resolve()


def test_generated_validator_is_fresh() -> None:
    from renderer.load.overlay_schema import GENERATED, generated_source

    assert GENERATED.read_text() == generated_source(), "regenerate: python -m renderer.load.overlay_schema"


def test_cluster_file_symlinked_out_of_the_repository_is_refused(repo, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "cluster.yaml"
    outside.parent.mkdir()
    outside.write_text(cluster("c1", MINIMAL))
    root = repo({"clusters/c1/.keep": ""})
    os.symlink(outside, root / "clusters/c1/cluster.yaml")
    assert "error[OVL-PATH]: overlay is outside the repository root" in error_of(root / "clusters/c1")


def test_null_deletes_a_typed_inherited_block(repo) -> None:
    root = repo({
        "base.yaml": HEAD + MINIMAL + "hubble: {enabled: true}\ngpu: {variant: none}\n",
        "clusters/c1/cluster.yaml": cluster("c1", "hubble: null\ngpu: {variant: null}\n", "../../base.yaml"),
    })
    data = load_overlay(root / "clusters/c1").data
    assert "hubble" not in data and data["gpu"] == {}


def test_platform_values_keys_cozy_render_reads_are_typed(repo) -> None:
    root = repo({"clusters/c1/cluster.yaml": cluster(
        "c1", "host: {os: apt}\nplatform:\n  variant: isp-full\n  values:\n    bundles: {disabledPackages: [[a]]}\n")})
    # (enabledPackages entries are not typed: a non-string one renders and has no effect, PLT-08.)
    assert "platform.values.bundles.disabledPackages[0] must be a string, got array" in error_of(root / "clusters/c1")
