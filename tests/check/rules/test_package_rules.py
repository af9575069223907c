"""PKG-* rules: for each, an overlay that fires it and one that does not, checked one rule at a time.

Overlays are YAML text written into a throw-away repo (``repo`` fixture); findings are compared with
the line and column of the value that caused them, so a rule that reports at the wrong place fails.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from renderer.check.rules import run_rules
from renderer.emit import RenderResult
from renderer.errors import ERROR, WARNING, Finding, RenderError
from renderer.load.overlay import load_overlay
from tests.helpers import emit_overlay, render

HEADER = """\
apiVersion: render.cozystack.io/v1alpha1
kind: ClusterOverlay
metadata: {name: c1}
host: {os: apt}
"""
# Exact copy of the docs block, examples/metallb-package-frrk8s-with-namespace.yaml
# (cozystack/website @ aa0d9e1b, content/en/docs/next/operations/configuration/components.md L23-35,
# Apache-2.0): a Package with the namespace PKG-01 refuses.
METALLB_WITH_NAMESPACE = """\
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata:
  name: cozystack.metallb
  namespace: cozy-system
spec:
  variant: default
  components:
    metallb:
      values:
        metallb:
          frrk8s:
            enabled: true
"""


def build(repo, body: str, files: dict[str, str] | None = None) -> Path:
    """Write clusters/c1/cluster.yaml (HEADER + body) and side files; returns the cluster folder."""
    tree = {"clusters/c1/cluster.yaml": HEADER + textwrap.dedent(body)}
    tree.update({f"clusters/c1/{name}": textwrap.dedent(text) for name, text in (files or {}).items()})
    return repo(tree) / "clusters" / "c1"


def result_of(repo, body: str, files: dict[str, str] | None = None) -> RenderResult:
    return emit_overlay(load_overlay(build(repo, body, files)))


def run(repo, rule_id: str, body: str, files: dict[str, str] | None = None) -> list[Finding]:
    return run_rules(result_of(repo, body, files), only=[rule_id])


def line_col(finding: Finding) -> tuple[int, int]:
    assert finding.location is not None, finding
    return finding.location.line, finding.location.col


def position(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """1-based line and column of the n-th ``needle`` in HEADER + text, as the overlay reports them."""
    full = HEADER + textwrap.dedent(text)
    start = -1
    for _ in range(occurrence):
        start = full.index(needle, start + 1)
    line = full.count("\n", 0, start) + 1
    col = start - (full.rfind("\n", 0, start) + 1) + 1
    return line, col


# ---- PKG-01 -------------------------------------------------------------------------------------

PKG01_FULL_FORM = """\
platform: {variant: isp-full}
packages:
  cozystack.metallb:
    apiVersion: cozystack.io/v1alpha1
    kind: Package
    metadata:
      name: cozystack.metallb
      namespace: cozy-system
    spec:
      variant: default
      components: {metallb: {values: {metallb: {frrk8s: {enabled: true}}}}}
"""


def test_pkg01_docs_example_under_packages_is_refused_at_the_namespace(repo) -> None:
    cluster = build(repo, PKG01_FULL_FORM)
    with pytest.raises(RenderError) as exc:
        render(cluster)
    assert exc.value.exit_code == 3
    (finding,) = [f for f in exc.value.findings if f.code == "PKG-01"]
    assert finding.location.path.endswith("cluster.yaml")
    assert line_col(finding) == position(PKG01_FULL_FORM, "cozy-system")


def test_pkg01_docs_example_as_extra_manifest_is_refused_at_the_namespace(repo) -> None:
    cluster = build(repo, "platform: {variant: isp-full}\nmanifests: [metallb.yaml]\n",
                    {"metallb.yaml": METALLB_WITH_NAMESPACE})
    with pytest.raises(RenderError) as exc:
        render(cluster)
    (finding,) = [f for f in exc.value.findings if f.code == "PKG-01"]
    assert finding.location.path.endswith("metallb.yaml")
    assert line_col(finding) == (5, 14)  # `namespace: cozy-system` in the example file


def test_pkg01_passes_without_namespace(repo) -> None:
    assert run(repo, "PKG-01", PKG01_FULL_FORM.replace("      namespace: cozy-system\n", "")) == []


# ---- PKG-02 -------------------------------------------------------------------------------------

SOURCE = """\
apiVersion: cozystack.io/v1alpha1
kind: PackageSource
metadata:
  name: acme.widgets
  {namespace}
spec:
  variants:
  - name: default
    dependsOn: [cozystack.networking]
    components:
    - {{name: widgets, path: system/widgets, install: {{namespace: acme-widgets}}}}
    - {{name: library-only, path: system/lib}}
"""


def test_pkg02_packagesource_with_namespace(repo) -> None:
    (finding,) = run(repo, "PKG-02", "platform: {variant: isp-full}\nmanifests: [source.yaml]\n",
                     {"source.yaml": SOURCE.format(namespace="namespace: cozy-system")})
    assert finding.severity == ERROR
    assert finding.message == "PackageSource is cluster-scoped: remove metadata.namespace."
    assert finding.location.path.endswith("source.yaml") and line_col(finding) == (5, 14)


def test_pkg02_passes_without_namespace(repo) -> None:
    assert run(repo, "PKG-02", "platform: {variant: isp-full}\nmanifests: [source.yaml]\n",
               {"source.yaml": SOURCE.format(namespace="")}) == []


# ---- PKG-03 -------------------------------------------------------------------------------------

def test_pkg03_name_without_cozystack_prefix_is_an_error_with_a_suggestion(repo) -> None:
    body = "platform: {variant: isp-full}\npackages:\n  metallb: {variant: default}\n"
    (finding,) = run(repo, "PKG-03", body)
    assert finding.severity == ERROR
    assert finding.message == ("No PackageSource named metallb; the controller will report "
                               "PackageSourceNotFound. Did you mean cozystack.metallb?")
    assert line_col(finding) == position(body, "metallb:")  # a mapping is located at its key


def test_pkg03_unlisted_cozystack_name_states_what_the_platform_ships(repo) -> None:
    # Reference PKG-03 is an error: the cluster's chart version ships every PackageSource the platform
    # creates, so a name outside them (and the render) is PackageSourceNotFound, not a maybe.
    (finding,) = run(repo, "PKG-03",
                     "platform: {variant: isp-full}\npackages:\n  cozystack.metalb: {variant: default}\n")
    assert finding.severity == ERROR
    assert "the platform chart v1.6.2 does not ship one" in finding.message
    assert "Did you mean cozystack.metallb?" in finding.message


def test_pkg03_names_the_chart_version_that_ships_the_source(repo) -> None:
    (finding,) = run(repo, "PKG-03", "platform: {variant: isp-full, version: v1.6.2}\npackages:\n"
                                     "  cozystack.computeplane-application: {variant: kubevirt}\n")
    assert finding.severity == ERROR
    assert "(The platform chart main-3c780ac ships it.)" in finding.message


def test_pkg03_passes_for_catalogue_names_and_sources_in_the_render(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.kuberture: {variant: default}
      acme.widgets: {variant: default}
    manifests: [source.yaml]
    """
    assert run(repo, "PKG-03", body, {"source.yaml": SOURCE.format(namespace="")}) == []


# ---- PKG-04 -------------------------------------------------------------------------------------

def test_pkg04_unknown_variant_lists_the_valid_ones(repo) -> None:
    body = "platform: {variant: isp-full}\npackages:\n  cozystack.multus: {variant: thick}\n"
    (finding,) = run(repo, "PKG-04", body)
    assert finding.message == "Variant thick not found in PackageSource cozystack.multus (valid: default)."
    assert line_col(finding) == position(body, "thick")


def test_pkg04_empty_variant_of_a_standalone_package_means_default(repo) -> None:
    # networking opted out of the platform: our object alone decides the variant, and it is empty.
    body = """\
    platform:
      variant: isp-full
      values: {bundles: {disabledPackages: [cozystack.networking]}}
    packages:
      cozystack.networking: {components: {cilium: {values: {}}}}
    """
    (finding,) = run(repo, "PKG-04", body)
    assert "Variant default not found in PackageSource cozystack.networking (spec.variant is empty" in finding.message


def test_pkg04_passes(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.multus: {variant: default}
      cozystack.networking: {components: {cilium: {values: {cilium: {hubble: {enabled: true}}}}}}
      acme.widgets: {variant: default}
    manifests: [source.yaml]
    """
    # networking keeps the platform's variant.
    assert run(repo, "PKG-04", body, {"source.yaml": SOURCE.format(namespace="")}) == []


def test_pkg04_knows_every_packagesource_of_the_chart(repo) -> None:
    """The catalogue is generated from the chart's sources/: no partial variant lists remain."""
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.mariadb-operator: {variant: galera}
    """
    (finding,) = run(repo, "PKG-04", body)
    assert finding.severity == ERROR
    assert finding.message.startswith("Variant galera not found in PackageSource cozystack.mariadb-operator")


def test_pkg04_checks_variants_of_a_packagesource_in_the_render(repo) -> None:
    body = "platform: {variant: isp-full}\npackages:\n  acme.widgets: {variant: fast}\nmanifests: [source.yaml]\n"
    (finding,) = run(repo, "PKG-04", body, {"source.yaml": SOURCE.format(namespace="")})
    assert finding.message == "Variant fast not found in PackageSource acme.widgets (valid: default)."


# ---- PKG-05 -------------------------------------------------------------------------------------

def test_pkg05_top_level_values(repo) -> None:
    body = "platform: {variant: isp-full}\npackages:\n  cozystack.kuberture:\n" \
           "    variant: default\n    values: {a: 1}\n"
    (finding,) = run(repo, "PKG-05", body)
    assert finding.message == ("Unknown field spec.values: component values go under "
                               "spec.components.<component>.values.")
    assert line_col(finding) == position(body, "values: {a: 1}")


def test_pkg05_passes(repo) -> None:
    body = "platform: {variant: isp-full}\npackages:\n  cozystack.kuberture:\n    variant: default\n" \
           "    ignoreDependencies: []\n    components: {kuberture: {values: {a: 1}}}\n"
    assert run(repo, "PKG-05", body) == []


# ---- PKG-06 -------------------------------------------------------------------------------------

def test_pkg06_component_not_in_the_variant(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.multus: {variant: default, components: {multus-cni: {values: {a: 1}}}}
    """
    (finding,) = run(repo, "PKG-06", body)
    assert finding.severity == WARNING
    assert finding.message == ("Component multus-cni is not installed by cozystack.multus/default; "
                               "its values are ignored.")
    assert line_col(finding) == position(body, "multus-cni:")


def test_pkg06_component_without_install_block(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      acme.widgets: {variant: default, components: {library-only: {values: {}}}}
    manifests: [source.yaml]
    """
    (finding,) = run(repo, "PKG-06", body, {"source.yaml": SOURCE.format(namespace="")})
    assert "library-only is not installed by acme.widgets/default" in finding.message


def test_pkg06_passes_and_skips_partial_component_lists(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.multus: {variant: default, components: {multus: {values: {}}}}
      cozystack.metallb: {variant: default, components: {metallb: {values: {}}}}
    """
    assert run(repo, "PKG-06", body) == []


# ---- PKG-07 -------------------------------------------------------------------------------------

def test_pkg07_extra_key_and_scalar_values(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.kuberture:
        variant: default
        components:
          kuberture: {value: {a: 1}}
          other: {values: [a, b]}
    """
    first, second = run(repo, "PKG-07", body)
    assert first.message == "components.kuberture accepts only enabled (bool) and values (object); " \
                            "value is pruned by the API server."
    assert line_col(first) == position(body, "value: {a: 1}")
    assert second.message == "components.other accepts only enabled (bool) and values (object); " \
                             "values is a list, which Helm cannot use."


def test_pkg07_passes(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.kuberture: {variant: default, components: {kuberture: {enabled: false, values: {a: 1}}}}
    """
    assert run(repo, "PKG-07", body) == []


# ---- PKG-08 -------------------------------------------------------------------------------------

def test_pkg08_dependency_not_rendered(repo) -> None:
    # BYOP: the default platform variant renders nothing, so gpu-operator's cozystack.networking is missing.
    body = "platform: {variant: default}\npackages:\n  cozystack.gpu-operator: {variant: container}\n"
    (finding,) = run(repo, "PKG-08", body)
    assert finding.message == ("cozystack.gpu-operator depends on cozystack.networking, which is not rendered; "
                               "it will stay DependenciesNotReady.")
    assert line_col(finding) == position(body, "container")


def test_pkg08_platform_rendered_package_whose_dependency_is_disabled(repo) -> None:
    body = """\
    platform:
      variant: isp-full
      values:
        bundles:
          disabledPackages: [cozystack.networking]
    """
    # One mistake, one line (issue 19 item 6): grouped by the missing dependency, at its disabled entry.
    (finding,) = run(repo, "PKG-08", body)
    assert finding.message.startswith("cozystack.networking is not rendered, and ")
    count = int(finding.message.split(", and ")[1].split()[0])
    assert count > 40 and f"and {count - 5} more" in finding.message
    assert "(cozystack.backup-controller, " in finding.message  # the first five names, sorted
    assert line_col(finding) == position(body, "cozystack.networking")


def test_pkg08_leaves_the_hami_dependency_to_hami_02(repo) -> None:
    """cozystack.hami is the only optional package with a dependency; HAMI-02 reports that edge once."""
    body = """\
    platform:
      variant: isp-full
      values: {bundles: {enabledPackages: [cozystack.hami]}}
    """
    assert run(repo, "PKG-08", body) == []
    (finding,) = run(repo, "HAMI-02", body)
    assert finding.message == "cozystack.hami depends on cozystack.gpu-operator."
    assert line_col(finding) == position(body, "cozystack.hami")


def test_pkg08_passes_when_dependency_is_platform_rendered_ours_or_ignored(repo) -> None:
    assert run(repo, "PKG-08", "platform: {variant: isp-full}\npackages:\n"
                               "  cozystack.gpu-operator: {variant: container}\n") == []
    assert run(repo, "PKG-08", "platform: {variant: default}\npackages:\n"
                               "  cozystack.gpu-operator: {variant: container}\n"
                               "  cozystack.networking: {variant: cilium}\n"
                               "  cozystack.gateway-api-crds: {variant: default}\n") == []
    assert run(repo, "PKG-08", "platform: {variant: default}\npackages:\n  cozystack.gpu-operator:\n"
                               "    variant: container\n    ignoreDependencies: [cozystack.networking]\n") == []


# ---- PKG-09 -------------------------------------------------------------------------------------

def test_pkg09_ignore_entry_not_in_depends_on(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.gpu-operator:
        variant: container
        ignoreDependencies: [cozystack.networking, cozystack.multus]
    """
    (finding,) = run(repo, "PKG-09", body)
    assert finding.severity == WARNING
    assert finding.message == ("ignoreDependencies entry cozystack.multus has no effect for "
                               "cozystack.gpu-operator/container.")
    assert line_col(finding) == position(body, "cozystack.multus")


def test_pkg09_passes_and_skips_unknown_depends_on(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.gpu-operator: {variant: container, ignoreDependencies: [cozystack.networking]}
    """
    assert run(repo, "PKG-09", body) == []


# ---- PKG-10 -------------------------------------------------------------------------------------

def test_pkg10_platform_without_variant(repo) -> None:
    body = 'platform: {variant: ""}\n'
    (finding,) = run(repo, "PKG-10", body)
    assert finding.message == ("spec.variant is empty and resolves to 'default'; "
                               "for the platform that renders no bundles.")
    assert line_col(finding) == position(body, '""')


def test_pkg10_standalone_child_without_variant(repo) -> None:
    body = "platform: {variant: isp-full}\npackages:\n  cozystack.kuberture: {components: {kuberture: {values: {}}}}\n"
    (finding,) = run(repo, "PKG-10", body)
    assert finding.severity == WARNING
    assert finding.message == ("spec.variant of cozystack.kuberture is empty and resolves to 'default'; "
                               "set it explicitly.")


def test_pkg10_passes_for_explicit_variants_and_co_managed_packages(repo) -> None:
    # metallb is rendered by the platform on isp-full: the platform's variant applies.
    body = "platform: {variant: isp-full}\npackages:\n  cozystack.metallb: {components: {metallb: {values: {}}}}\n" \
           "  cozystack.kuberture: {variant: default}\n"
    assert run(repo, "PKG-10", body) == []
