"""PLT-* rules and the platform render model behind them.

Messages the chart itself fails with (PLT-03/04/05/06/10) are compared with the exact text of the
project's Cozystack reference, section (g), so a user grepping a HelmRelease condition finds ours.
"""

from __future__ import annotations

import pytest

from renderer.check.rules import run_rules
from renderer.errors import ERROR, WARNING
from renderer.load.variants import Variants
from renderer.platform_chart.model import go_quote
from renderer.resolve.platform import PlatformFacts, leaves
from tests.check.rules.test_package_rules import line_col, position, result_of, run

# Exact chart messages, copied from the reference section (g) (cozystack/cozystack @ 3c780acd,
# packages/core/platform/templates/{bundles/iaas.yaml,bundles/paas.yaml,bundles/naas.yaml,_helpers.tpl}).
IAAS_VARIANT = "bundles.iaas.enabled can only be true when bundles.system.variant is 'isp-full' or 'isp-full-generic'"
PAAS_VARIANT = ("bundles.paas.enabled can only be true when bundles.system.variant is 'isp-full', "
                "'isp-full-generic', or 'isp-hosted'")
NAAS_VARIANT = ("bundles.naas.enabled can only be true when bundles.system.variant is 'isp-full', "
                "'isp-full-generic', or 'isp-hosted'")
IAAS_SYSTEM = "bundles.iaas.enabled requires bundles.system.enabled: the iaas bundle depends on"
PAAS_SYSTEM = "bundles.paas.enabled requires bundles.system.enabled: the paas catalog depends on"
NAAS_SYSTEM = "bundles.naas.enabled requires bundles.system.enabled: the naas catalog depends on"
GPU_VARIANT = 'bundles.iaas.gpuOperatorVariant must be "default" or "vgpu", got "passthrough"'
STAGE_CNI = ('networking.stageCniPlugins: expected a boolean, got "maybe" -- leaving it unset follows the '
             "bundle variant")


MAIN = "main-3c780ac"


def facts_for(variant: str, values: dict | None = None, version: str | None = None) -> PlatformFacts:
    return PlatformFacts(Variants().catalogue(), variant, values or {}, version=version)


# ---- the render model -----------------------------------------------------------------------------

def test_rendered_packages_follow_the_system_variant() -> None:
    full = facts_for("isp-full", version=MAIN).rendered_packages
    generic = facts_for("isp-full-generic", version=MAIN).rendered_packages
    hosted = facts_for("isp-hosted", version=MAIN).rendered_packages
    assert facts_for("default").rendered_packages == {}
    assert (full["cozystack.networking"].variant, generic["cozystack.networking"].variant,
            hosted["cozystack.networking"].variant) == ("kubeovn-cilium", "kubeovn-cilium-generic", "noop")
    assert full["cozystack.cozystack-scheduler"].variant == "linstor"
    assert hosted["cozystack.cozystack-scheduler"].variant == "default"
    assert "cozystack.multus" in full and "cozystack.multus" not in hosted
    assert "cozystack.metallb" in generic and "cozystack.metallb" not in hosted
    assert full["cozystack.kubevirt"].variant == "default" and "cozystack.kubevirt" not in hosted
    assert full["cozystack.vm-instance-application"].variant == "kubevirt"
    assert "cozystack.vpn-application" in hosted  # naas renders on isp-hosted
    assert "cozystack.ouroboros" not in full


def test_v1_6_2_isp_hosted_renders_the_catalogue_without_the_system_bundle() -> None:
    """v1.6.2's system.yaml has no isp-hosted branch: paas/naas render with no engine, no networking."""
    hosted = facts_for("isp-hosted", version="v1.6.2").rendered_packages
    assert "cozystack.networking" not in hosted and "cozystack.cozystack-engine" not in hosted
    assert "cozystack.vpn-application" in hosted
    assert facts_for("isp-hosted").rendered_packages == hosted  # the default is v1.6.2


def test_rendered_packages_obey_enabled_disabled_and_values() -> None:
    values = {"bundles": {"enabledPackages": ["cozystack.gpu-operator", "cozystack.hami", "cozystack.bootbox"],
                          "disabledPackages": ["cozystack.hami", "cozystack.bootbox", "cozystack.metallb"],
                          "iaas": {"gpuOperatorVariant": "vgpu"}},
              "authentication": {"oidc": {"enabled": True}}, "publishing": {"proxyProtocol": True}}
    rendered = facts_for("isp-full", values).rendered_packages
    assert rendered["cozystack.gpu-operator"].variant == "vgpu"
    assert "cozystack.hami" not in rendered and "cozystack.metallb" not in rendered
    # The bootbox gate reads enabledPackages only: the application still renders, bootbox itself does not.
    assert "cozystack.bootbox-application" in rendered and "cozystack.bootbox" not in rendered
    assert rendered["cozystack.cozystack-engine"].variant == "oidc"
    assert rendered["cozystack.monitoring-application"].variant == "oidc"
    assert "cozystack.ouroboros" in rendered


def test_rendered_component_values_are_the_reference_keys() -> None:
    full = facts_for("isp-full", {"networking": {"podCIDR": "10.244.0.0/16"}}, MAIN).rendered_packages
    assert full["cozystack.networking"].values == {
        ("cilium", "values", "cilium", "cgroup", "autoMount", "enabled"): False,
        ("cilium", "values", "cilium", "gatewayAPI", "enableAlpn"): True,
        ("cilium", "values", "cilium", "k8sServiceHost"): "localhost",
        ("cilium", "values", "cilium", "k8sServicePort"): "7445",
        # isp-full renders all four CIDRs from the chart's values.yaml defaults.
        ("kubeovn", "values", "kube-ovn", "ipv4", "POD_CIDR"): "10.244.0.0/16",
        ("kubeovn", "values", "kube-ovn", "ipv4", "POD_GATEWAY"): "10.244.0.1",
        ("kubeovn", "values", "kube-ovn", "ipv4", "SVC_CIDR"): "10.96.0.0/16",
        ("kubeovn", "values", "kube-ovn", "ipv4", "JOIN_CIDR"): "100.64.0.0/16",
    }
    assert full["cozystack.multus"].values == {("multus", "values", "stageCniPlugins"): True}
    assert full["cozystack.kubevirt"].values == {("kubevirt", "values", "cpuAllocationRatio"): 10}
    generic = facts_for("isp-full-generic", {"networking": {"stageCniPlugins": "Off"}}, MAIN).rendered_packages
    assert generic["cozystack.multus"].values == {("multus", "values", "stageCniPlugins"): False}
    assert generic["cozystack.linstor"].values == {("linstor", "values", "talos", "enabled"): False}
    # The generic endpoint comes from a cluster ConfigMap at reconcile time: not decided offline.
    assert ("cilium", "values", "cilium", "k8sServiceHost") not in generic["cozystack.networking"].values


def test_v1_6_2_renders_no_alpn_ipsec_telemetry_or_staging_switch() -> None:
    values = {"gateway": {"http2": False}, "networking": {"encryption": {"enabled": True}, "stageCniPlugins": False},
              "telemetry": {"disabled": True}}
    old = facts_for("isp-full", values, "v1.6.2").rendered_packages
    assert not any(path[-1] in ("enableAlpn", "ENABLE_OVN_IPSEC") for path in old["cozystack.networking"].values)
    assert old["cozystack.multus"].values == {} and old["cozystack.cozystack-engine"].values == {}
    new = facts_for("isp-full", values, MAIN).rendered_packages
    assert new["cozystack.networking"].values[("cilium", "values", "cilium", "gatewayAPI", "enableAlpn")] is False
    assert new["cozystack.multus"].values == {("multus", "values", "stageCniPlugins"): False}


def test_stage_cni_plugins_spellings() -> None:
    for value, expected in (("YES", (True, True)), (0, (False, True)), (None, (True, True)),
                            ("off", (False, True)), ("maybe", (None, False)), (2, (None, False))):
        assert facts_for("isp-full", {"networking": {"stageCniPlugins": value}}, MAIN).stage_cni_plugins() == expected
        # v1.6.2 has no staging switch and its multus stages nothing, whatever is written.
        assert facts_for("isp-full", {"networking": {"stageCniPlugins": value}}, "v1.6.2").stage_cni_plugins() == \
            (False, True)


@pytest.mark.parametrize("version", ["v1.6.2", "main-3c780ac"])
def test_catalogue_lists_every_platform_rendered_name_as_a_package_source(version: str) -> None:
    from renderer.platform_chart.model import chart_model, versioned_catalogue

    catalogue = versioned_catalogue(Variants().catalogue(), version)
    names = PlatformFacts(catalogue, "isp-full", {}, version=version).known_platform_names()
    assert names - set(catalogue["packages"]) == set()
    for name, entry in catalogue["packages"].items():
        assert name.startswith("cozystack."), name
        assert entry["variants"], name
        assert entry.get("partial", False) in (True, False, ["components"], ["variants"]), name
    # Nothing the chart knows is partial: every PackageSource of the chart comes from the chart.
    for name in chart_model(version).sources:
        assert not catalogue["packages"][name].get("partial"), name


def test_leaves_and_go_quote() -> None:
    assert leaves({"a": {"b": 1, "c": {}}, "d": [1]}) == {("a", "b"): 1, ("a", "c"): {}, ("d",): [1]}
    assert go_quote('a"b\\c\n\x01é') == '"a\\"b\\\\c\\n\\x01é"'


# ---- PLT-01 / PLT-02 ------------------------------------------------------------------------------

MISNAMED = """\
apiVersion: cozystack.io/v1alpha1
kind: Package
metadata:
  name: cozystack-platform
spec:
  variant: isp-full
  components: {platform: {values: {}}}
"""


def test_plt01_misnamed_platform_package(repo) -> None:
    (finding,) = run(repo, "PLT-01", "platform: {variant: isp-full}\nmanifests: [platform.yaml]\n",
                     {"platform.yaml": MISNAMED})
    assert finding.message == ("The platform Package must be named cozystack.cozystack-platform "
                               "(found cozystack-platform).")
    assert finding.location.path.endswith("platform.yaml") and line_col(finding) == (4, 9)


def test_plt01_passes(repo) -> None:
    body = "platform: {variant: isp-full}\npackages:\n  cozystack.kuberture: {variant: default}\n"
    assert run(repo, "PLT-01", body) == []


def test_plt02_unknown_platform_variant(repo) -> None:
    body = "platform: {variant: distro-full}\n"
    (finding,) = run(repo, "PLT-02", body)
    assert finding.message == ("Unknown platform variant distro-full (valid: default, isp-full, isp-full-generic, "
                               "isp-hosted); distro-full appears in the docs but the platform PackageSource has "
                               "no such variant.")
    assert line_col(finding) == position(body, "distro-full")


@pytest.mark.parametrize("variant", ["default", "isp-full", "isp-full-generic", "isp-hosted"])
def test_plt02_passes(repo, variant: str) -> None:
    assert run(repo, "PLT-02", f"platform: {{variant: {variant}}}\n") == []


# ---- PLT-03 -------------------------------------------------------------------------------------

def test_plt03_exact_chart_message(repo) -> None:
    body = "platform:\n  variant: isp-full\n  values: {bundles: {iaas: {gpuOperatorVariant: passthrough}}}\n"
    (finding,) = run(repo, "PLT-03", body)
    assert finding.message == GPU_VARIANT
    assert line_col(finding) == position(body, "passthrough")


def test_plt03_is_checked_even_without_gpu_operator_but_only_where_iaas_renders(repo) -> None:
    values = "  values: {bundles: {iaas: {gpuOperatorVariant: passthrough}}}\n"
    assert run(repo, "PLT-03", "platform:\n  variant: isp-full-generic\n" + values)
    assert run(repo, "PLT-03", "platform:\n  variant: isp-hosted\n" + values) == []
    for accepted in ("vgpu", "default", '""', "null"):
        body = f"platform:\n  variant: isp-full\n  values: {{bundles: {{iaas: {{gpuOperatorVariant: {accepted}}}}}}}\n"
        assert run(repo, "PLT-03", body) == []


def test_plt03_leaves_container_to_gpu03(repo) -> None:
    body = "platform:\n  variant: isp-full\n  values: {bundles: {iaas: {gpuOperatorVariant: container}}}\n"
    assert run(repo, "PLT-03", body) == []
    assert [f.code for f in run(repo, "GPU-03", body)] == ["GPU-03"]


# ---- PLT-04 / PLT-05 / PLT-06 ---------------------------------------------------------------------

def test_plt04_iaas_on_isp_hosted(repo) -> None:
    body = "platform:\n  variant: isp-hosted\n  values: {bundles: {iaas: {enabled: true}}}\n"
    (finding,) = run(repo, "PLT-04", body)
    assert finding.message == IAAS_VARIANT
    assert line_col(finding) == position(body, "true")


def test_plt04_points_at_the_system_variant_the_user_changed(repo) -> None:
    body = "platform:\n  variant: isp-full\n  values: {bundles: {system: {variant: isp-hosted}}}\n"
    (finding,) = run(repo, "PLT-04", body)
    assert line_col(finding) == position(body, "isp-hosted")


def test_plt04_passes(repo) -> None:
    body = "platform:\n  variant: isp-full-generic\n  values: {bundles: {iaas: {enabled: true}}}\n"
    assert run(repo, "PLT-04", body) == []
    assert run(repo, "PLT-04", "platform: {variant: isp-hosted}\n") == []


def test_plt05_bundles_without_system(repo) -> None:
    body = "platform:\n  variant: default\n  version: main-3c780ac\n" \
           "  values: {bundles: {iaas: {enabled: true}, paas: {enabled: true}, naas: {enabled: true}}}\n"
    assert run(repo, "PLT-05", body.replace("main-3c780ac", "v1.6.2")) == []  # v1.6.2 has none of these guards
    messages = sorted(f.message for f in run(repo, "PLT-05", body))
    assert [m.split(" the ")[0] for m in messages] == [
        "bundles.iaas.enabled requires bundles.system.enabled:",
        "bundles.naas.enabled requires bundles.system.enabled:",
        "bundles.paas.enabled requires bundles.system.enabled:"]
    assert messages[0].startswith(IAAS_SYSTEM) and messages[1].startswith(NAAS_SYSTEM)
    assert messages[2].startswith(PAAS_SYSTEM)


def test_plt05_defers_to_the_variant_guard_and_passes_with_system(repo) -> None:
    # system.variant invalid and system off: iaas.yaml reports its variant guard (PLT-04) first.
    body = "platform:\n  variant: default\n" \
           "  values: {bundles: {system: {variant: distro-full}, iaas: {enabled: true}}}\n"
    assert run(repo, "PLT-05", body) == []
    assert [f.message for f in run(repo, "PLT-04", body)] == [IAAS_VARIANT]
    assert run(repo, "PLT-05", "platform: {variant: isp-full}\n") == []


def test_plt06_paas_and_naas_on_an_unknown_system_variant(repo) -> None:
    body = "platform:\n  variant: isp-hosted\n  values: {bundles: {system: {variant: distro-full}}}\n"
    found = run(repo, "PLT-06", body)
    assert [f.message for f in found] == [PAAS_VARIANT, NAAS_VARIANT]
    assert {line_col(f) for f in found} == {position(body, "distro-full")}


def test_plt06_passes(repo) -> None:
    assert run(repo, "PLT-06", "platform: {variant: isp-hosted}\n") == []


# ---- PLT-07 -------------------------------------------------------------------------------------

def test_plt07_both_lists(repo) -> None:
    body = """\
    platform:
      variant: isp-full
      values:
        bundles:
          enabledPackages: [cozystack.gpu-operator, cozystack.nfs-driver]
          disabledPackages: [cozystack.nfs-driver]
    """
    (finding,) = run(repo, "PLT-07", body)
    assert finding.severity == WARNING
    assert finding.message == "cozystack.nfs-driver is both enabled and disabled; disabled wins (no Package)."
    assert line_col(finding) == position(body, "cozystack.nfs-driver")


def test_plt07_gpu_operator_mentions_the_kubevirt_wiring(repo) -> None:
    body = "platform:\n  variant: isp-full\n  values: {bundles: {enabledPackages: [cozystack.gpu-operator], " \
           "disabledPackages: [cozystack.gpu-operator]}}\n"
    (finding,) = run(repo, "PLT-07", body)
    assert finding.message == ("cozystack.gpu-operator is both enabled and disabled; disabled wins "
                               "(no Package, no KubeVirt GPU wiring).")


def test_plt07_bootbox_special_case(repo) -> None:
    body = "platform:\n  variant: isp-full\n  values: {bundles: {enabledPackages: [cozystack.bootbox], " \
           "disabledPackages: [cozystack.bootbox]}}\n"
    (finding,) = run(repo, "PLT-07", body)
    assert finding.message == ("cozystack.bootbox is both enabled and disabled: the bootbox gate ignores "
                               "disabledPackages, so cozystack.bootbox-application is still rendered (only "
                               "cozystack.bootbox is suppressed) unless it is disabled too.")
    both = body.replace("disabledPackages: [cozystack.bootbox]",
                        "disabledPackages: [cozystack.bootbox, cozystack.bootbox-application]")
    (finding,) = run(repo, "PLT-07", both)
    assert finding.message == "cozystack.bootbox is both enabled and disabled; disabled wins (no Package)."


def test_plt07_passes(repo) -> None:
    body = "platform:\n  variant: isp-full-generic\n  values: {bundles: {enabledPackages: [cozystack.nfs-driver], " \
           "disabledPackages: [cozystack.backupstrategy-controller]}}\n"
    assert run(repo, "PLT-07", body) == []
    # The variant file's own enabledPackages entry is not the user's doing.
    assert run(repo, "PLT-07", "platform:\n  variant: isp-full-generic\n"
                               "  values: {bundles: {disabledPackages: [cozystack.backupstrategy-controller]}}\n") == []


# ---- PLT-08 -------------------------------------------------------------------------------------

def test_plt08_entries_without_effect(repo) -> None:
    body = """\
    platform:
      variant: isp-hosted
      version: main-3c780ac
      values:
        bundles:
          enabledPackages: [cozystack.gpu-operator, cozystack.metallb, kuberture, cozystack.unheard-of,
                            cozystack.kuberture]
    """
    found = run(repo, "PLT-08", body)
    assert [f.message for f in found] == [
        "cozystack.gpu-operator in enabledPackages has no effect on this variant "
        "(it is optional in the iaas bundle, which does not render here).",
        "cozystack.metallb in enabledPackages has no effect on this variant "
        "(it is a default package: only disabledPackages affects it).",
        "cozystack.unheard-of in enabledPackages has no effect on this variant "
        "(no platform bundle references this name).",
        "kuberture in enabledPackages has no effect on this variant "
        "(optional packages are listed by their full cozystack. name).",
    ]  # in the rendered list's order (the pipeline sorts it)
    assert line_col(found[1]) == position(body, "cozystack.metallb")


def test_plt08_skips_the_isp_full_generic_inert_entry(repo) -> None:
    assert run(repo, "PLT-08", "platform: {variant: isp-full-generic}\n") == []
    # Re-listing the variant file's own entry next to a real one is not reported either.
    body = "platform:\n  variant: isp-full-generic\n  values: {bundles: {enabledPackages: " \
           "[cozystack.backupstrategy-controller, cozystack.external-dns]}}\n"
    assert run(repo, "PLT-08", body) == []
    # On isp-full the same name is the user's own no-op.
    assert len(run(repo, "PLT-08", body.replace("isp-full-generic", "isp-full"))) == 1


def test_plt08_passes_for_optional_packages_and_gates(repo) -> None:
    body = "platform:\n  variant: isp-full\n  values: {bundles: {enabledPackages: " \
           "[cozystack.gpu-operator, cozystack.hami, cozystack.bootbox, cozystack.hetzner-robotlb]}}\n"
    assert run(repo, "PLT-08", body) == []


# ---- PLT-10 -------------------------------------------------------------------------------------

def test_plt10_exact_chart_message_where_it_is_read(repo) -> None:
    body = "platform:\n  variant: isp-full-generic\n  version: main-3c780ac\n" \
           "  values: {networking: {stageCniPlugins: maybe}}\n"
    assert run(repo, "PLT-10", body.replace("main-3c780ac", "v1.6.2")) == []  # v1.6.2 never reads it
    (finding,) = run(repo, "PLT-10", body)
    assert (finding.severity, finding.message) == (ERROR, STAGE_CNI)
    assert line_col(finding) == position(body, "maybe")


def test_plt10_is_a_warning_where_it_is_never_read(repo) -> None:
    body = "platform:\n  variant: isp-hosted\n  version: main-3c780ac\n  values: {networking: {stageCniPlugins: maybe}}\n"
    (finding,) = run(repo, "PLT-10", body)
    assert finding.severity == WARNING and "ignored on this configuration" in finding.message


@pytest.mark.parametrize("value", ["true", "'Yes'", "'ON'", "0", "'off'", "null", "false"])
def test_plt10_passes_for_accepted_spellings(repo, value: str) -> None:
    body = f"platform:\n  variant: isp-full\n  values: {{networking: {{stageCniPlugins: {value}}}}}\n"
    assert run(repo, "PLT-10", body) == []


# ---- PLT-11 -------------------------------------------------------------------------------------

def test_plt11_conflicting_platform_key_is_an_error(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.networking:
        components:
          cilium: {values: {cilium: {k8sServicePort: 7445, hubble: {enabled: true}}}}
    """
    (finding,) = run(repo, "PLT-11", body)
    assert finding.severity == ERROR
    assert finding.message == (
        'cozystack.networking is rendered by the platform release with '
        'spec.components.cilium.values.cilium.k8sServicePort="7445"; keep the platform\'s value or opt the '
        "Package out (bundles.disabledPackages) before managing it alone.")
    assert line_col(finding) == position(body, "7445")


def test_plt11_multus_stage_cni_plugins_edit_is_an_error(repo) -> None:
    body = "platform: {variant: isp-full, version: main-3c780ac}\npackages:\n  cozystack.multus:\n" \
           "    components: {multus: {values: {stageCniPlugins: false}}}\n"
    (finding,) = run(repo, "PLT-11", body)
    assert "spec.components.multus.values.stageCniPlugins=true" in finding.message


def test_plt11_additive_overlay_is_a_warning(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.metallb:
        variant: default
        components: {metallb: {values: {metallb: {frrk8s: {enabled: true}}}}}
    """
    (finding,) = run(repo, "PLT-11", body)
    assert finding.severity == WARNING
    assert finding.message == ("cozystack.metallb is co-managed with the platform release; platform-rendered keys "
                               "will be re-asserted on every platform upgrade.")
    assert line_col(finding) == position(body, "cozystack.metallb:")


def test_plt11_same_values_and_manifests_count_too(repo) -> None:
    manifest = ("apiVersion: cozystack.io/v1alpha1\nkind: Package\nmetadata: {name: cozystack.networking}\n"
                "spec:\n  components: {cilium: {values: {cilium: {k8sServicePort: '7445'}}}}\n")
    (finding,) = run(repo, "PLT-11", "platform: {variant: isp-full}\nmanifests: [networking.yaml]\n",
                     {"networking.yaml": manifest})
    assert finding.severity == WARNING and finding.location.path.endswith("networking.yaml")


def test_plt11_passes_when_opted_out_or_not_platform_rendered(repo) -> None:
    body = """\
    platform:
      variant: isp-full
      values: {bundles: {disabledPackages: [cozystack.metallb]}}
    packages:
      cozystack.metallb: {variant: default}
      cozystack.kuberture: {variant: default}
    """
    assert run(repo, "PLT-11", body) == []
    hosted = "platform: {variant: isp-hosted}\npackages:\n  cozystack.metallb: {variant: default}\n"
    assert run(repo, "PLT-11", hosted) == []  # isp-hosted renders no metallb


# ---- PLT-12 -------------------------------------------------------------------------------------

def test_plt12_variant_conflict(repo) -> None:
    body = "platform: {variant: isp-full-generic}\npackages:\n  cozystack.networking: {variant: kubeovn-cilium}\n"
    (finding,) = run(repo, "PLT-12", body)
    assert finding.message == ("Variant kubeovn-cilium conflicts with the platform-rendered variant "
                               "kubeovn-cilium-generic for cozystack.networking.")
    assert line_col(finding) == position(body, "kubeovn-cilium}")


def test_plt12_oidc_and_gpu_operator_variants(repo) -> None:
    body = """\
    platform:
      variant: isp-full
      values:
        authentication: {oidc: {enabled: true}}
        bundles: {enabledPackages: [cozystack.gpu-operator], iaas: {gpuOperatorVariant: vgpu}}
    packages:
      cozystack.cozystack-engine: {variant: default}
      cozystack.gpu-operator: {variant: default}
    """
    assert sorted(f.message for f in run(repo, "PLT-12", body)) == [
        "Variant default conflicts with the platform-rendered variant oidc for cozystack.cozystack-engine.",
        "Variant default conflicts with the platform-rendered variant vgpu for cozystack.gpu-operator.",
    ]


def test_plt12_passes(repo) -> None:
    body = """\
    platform:
      variant: isp-full
      values: {bundles: {disabledPackages: [cozystack.networking]}}
    packages:
      cozystack.networking: {variant: cilium}
      cozystack.kubevirt: {variant: default}
      cozystack.cozystack-scheduler: {variant: linstor}
    """
    assert run(repo, "PLT-12", body) == []


def test_all_plt_rules_together_on_the_docs_kuberture_example(repo) -> None:
    # examples/platform-package-enabled-external-dns-kuberture.yaml (cozystack/website @ aa0d9e1b,
    # networking/kuberture.md L45-76, Apache-2.0) as an overlay: only the co-management note fires.
    body = """\
    platform:
      variant: isp-full
      values: {bundles: {enabledPackages: [cozystack.external-dns, cozystack.kuberture]}}
    packages:
      cozystack.kuberture:
        variant: default
        components: {kuberture: {values: {kuberture: {config: {outputs: [{name: api}]}}}}}
    """
    result = result_of(repo, body)
    ids = [f"PLT-{n:02d}" for n in range(1, 13)] + [f"PKG-{n:02d}" for n in range(1, 11)]
    assert [(f.code, f.severity) for f in run_rules(result, only=ids)] == [("PLT-11", WARNING)]


def test_plt_11_is_worded_in_one_module() -> None:
    """Issue 17 item 2: the co-management rule has one body; nothing else copies its messages."""
    from pathlib import Path

    import renderer

    root = Path(renderer.__file__).parent
    holders = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                     if "is rendered by the platform release with" in p.read_text(encoding="utf-8")
                     or "is co-managed with the platform release; platform-rendered" in p.read_text(encoding="utf-8"))
    assert holders == ["check/rules/platform.py"]


# ---- PLT-14 / PLT-15: the cluster's version decides what is read and rendered ----------------------

def test_plt14_warns_for_keys_only_another_version_reads(repo) -> None:
    body = """\
    platform:
      variant: isp-full
      values:
        networking: {encryption: {enabled: true}, podCIDR: 10.244.0.0/16}
        telemetry: {disabled: true}
        gateway: {http2: false}
    """
    found = run(repo, "PLT-14", body)
    assert [f.message.split(" is not read")[0] for f in found] == [
        "gateway.http2", "networking.encryption.enabled", "telemetry.disabled"]
    assert all(f.severity == WARNING and "(read by main-3c780ac)" in f.message for f in found)
    assert line_col(found[2]) == position(body, "true}\n    gateway")
    # main reads every one of them; networking.podCIDR is read by both.
    assert run(repo, "PLT-14", body.replace("variant: isp-full", "variant: isp-full\n      version: main-3c780ac")) == []


def test_plt15_a_patch_of_a_package_only_main_renders_is_an_error(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.computeplane-application:
        components: {computeplane: {values: {replicas: 2}}}
    """
    (finding,) = run(repo, "PLT-15", body)
    assert finding.severity == ERROR and "rendered by the platform chart main-3c780ac but not by v1.6.2" in finding.message
    assert run(repo, "PLT-15", body.replace("{variant: isp-full}", "{variant: isp-full, version: main-3c780ac}")) == []
    # A whole Package with its variant is the user's own (PKG-03/PKG-04 judge it).
    assert run(repo, "PLT-15", body.replace("components:", "variant: kubevirt\n        components:")) == []


def test_plt12_an_empty_variant_on_a_patch_is_a_fight(repo) -> None:
    body = """\
    platform: {variant: isp-full}
    packages:
      cozystack.networking:
        variant: ""
        components: {cilium: {values: {cilium: {hubble: {enabled: true}}}}}
    """
    (finding,) = run(repo, "PLT-12", body)
    assert finding.severity == ERROR and 'spec.variant "" overrides the platform-rendered variant kubeovn-cilium' \
        in finding.message
    assert line_col(finding) == position(body, '""')
    assert run(repo, "PKG-10", body) == []  # one cause, one finding


def test_an_empty_map_as_a_package_list_is_what_the_chart_accepts(repo) -> None:
    """Issue 19 item 7: `default (list) {}` is an empty list to the chart; a non-empty map fails `has`."""
    body = "platform:\n  variant: isp-full\n  values: {bundles: {disabledPackages: {}, enabledPackages: {}}}\n"
    assert run(repo, "PLT-13", body) == []  # and no OVL-SCHEMA refusal
    body = "platform:\n  variant: isp-full\n  values: {bundles: {disabledPackages: {a: 1}}}\n"
    (finding,) = run(repo, "PLT-13", body)  # one cause, one line, though four templates call `has`
    assert finding.message.endswith("at <has $name $disabled>: error calling has: Cannot find has on type map "
                                    "(platform chart v1.6.2)")
    assert line_col(finding) == position(body, "disabledPackages")


def test_no_guard_text_is_claimed_where_the_chart_fails_before_it(repo) -> None:
    """Issue 19 item 4: `bundles.system.variant: 1` fails `eq` first; PLT-04/PLT-06 quote nothing."""
    body = "platform:\n  variant: isp-full\n  values: {bundles: {system: {variant: 1}, paas: {enabled: true}}}\n"
    assert run(repo, "PLT-04", body) == [] and run(repo, "PLT-06", body) == []
    (finding,) = run(repo, "PLT-13", body)
    assert 'at <eq .Values.bundles.system.variant "isp-full">: error calling eq: incompatible types' in finding.message
