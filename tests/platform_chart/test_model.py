"""The render-path model of the chart (renderer.platform_chart.model), without helm."""

from __future__ import annotations

import pytest

from renderer.load.variants import Variants
from renderer.platform_chart.gotemplate import GoTemplateError, Unsupported, evaluate, parse
from renderer.platform_chart.model import chart_model, go_format, url_parse_error, versioned_catalogue
from renderer.resolve.platform import PlatformFacts


@pytest.mark.parametrize(("value", "expected"), [
    (1e6, "1e+06"), (1000000, "1e+06"), (123456, "123456"), (1234567.0, "1.234567e+06"), (0.0001, "0.0001"),
    (0.00001, "1e-05"), (1.5, "1.5"), (3.0, "3"), (-2.5e-7, "-2.5e-07"), (True, "true"), (None, "<nil>"),
    ([True], "[true]"), ({"enabled": True}, "map[enabled:true]"), ({"b": 1, "a": [1, "x"]}, "map[a:[1 x] b:1]"),
    ("text", "text"),
])
def test_go_format_is_percent_v_after_helms_json_round_trip(value, expected) -> None:
    assert go_format(value) == expected


def test_url_parse_errors_follow_go() -> None:
    assert "first path segment in URL cannot contain colon" in (url_parse_error("10.0.0.5:6443") or "")
    assert url_parse_error("https://10.0.0.5:6443") is None
    assert url_parse_error("api.example.org:6443") is None  # parses, with scheme "api.example.org"
    assert "expected string" in (url_parse_error(6443) or "")


def facts(variant: str, values: dict, version: str = "main-3c780ac") -> PlatformFacts:
    return PlatformFacts(Variants().catalogue(), variant, values, version=version)


def test_go_truthiness_turns_a_bundle_on() -> None:
    for flag in ("true", "false", "yes", 1):
        assert facts("default", {"bundles": {"system": {"enabled": flag}}}).rendered_packages, flag
    for flag in (False, "", 0, None):
        assert not facts("default", {"bundles": {"system": {"enabled": flag}}}).rendered_packages, flag


def test_versions_differ_where_the_charts_do() -> None:
    main, old = chart_model("main-3c780ac"), chart_model("v1.6.2")
    assert len(main.emits) == 93 and len(old.emits) == 91  # issue 10: 93 names at main
    assert len(main.sources) == 99 and len(old.sources) == 98
    assert "cozystack.computeplane-application" in main.emits and "cozystack.computeplane-application" not in old.emits
    assert main.reads("networking.stageCniPlugins") and not old.reads("networking.stageCniPlugins")
    # main fails on {encryption: true} (dig through a bool); v1.6.2 never reads it.
    assert facts("isp-full", {"networking": {"encryption": True}}).chart_problems
    assert not facts("isp-full", {"networking": {"encryption": True}}, "v1.6.2").chart_problems
    # main's iaas guard needs the system bundle; v1.6.2 has no such guard.
    values = {"bundles": {"system": {"enabled": False}, "iaas": {"enabled": True}}}
    assert facts("default", values).chart_problems
    assert not facts("default", values, "v1.6.2").chart_problems


def test_the_catalogue_has_every_source_of_the_chart() -> None:
    for version in ("v1.6.2", "main-3c780ac"):
        catalogue = versioned_catalogue(Variants().catalogue(), version)
        mariadb = catalogue["packages"]["cozystack.mariadb-operator"]
        assert list(mariadb["variants"]) == ["default"] and "partial" not in mariadb
        assert set(chart_model(version).emits) <= set(catalogue["packages"])


def test_the_evaluator_refuses_what_it_does_not_model() -> None:
    with pytest.raises(Unsupported):
        parse("printf \"%s\" .Values.x")
    with pytest.raises(GoTemplateError, match="can't evaluate field enabled in type interface"):
        evaluate(parse(".Values.a.enabled"), {"a": False})
    with pytest.raises(GoTemplateError, match="nil pointer evaluating interface"):
        evaluate(parse(".Values.a.b.c"), {})
    with pytest.raises(GoTemplateError, match="incompatible types for comparison"):
        evaluate(parse('eq .Values.a "x"'), {"a": [1]})
    assert evaluate(parse('has "x" (default (list) .Values.l)'), {"l": ["x"]}) is True


def test_the_three_conflicts_of_issue_10_are_errors(cluster, cli) -> None:
    from tests.conftest import overlay_doc

    folder = cluster(overlay_doc(
        platform={"variant": "isp-full-generic", "values": {
            "publishing": {"proxyProtocol": True, "apiServerEndpoint": "https://api.example.org:6443"},
            "bundles": {"enabledPackages": ["cozystack.gpu-operator"]}}},
        packages={
            "cozystack.ouroboros": {"variant": "default", "components": {"ouroboros": {"values": {"ouroboros": {
                "proxy": {"target": {"namespace": "tenant-root", "serviceName": "my-ingress"}}}}}}},
            "cozystack.kubevirt": {"variant": "default", "components": {"kubevirt": {"values": {
                "permittedHostDevices": {"pciHostDevices": [{"pciVendorSelector": "10DE:1234",
                                                             "resourceName": "nvidia.com/X"}]}}}}},
            "cozystack.mariadb-operator": {"variant": "galera"},
        }))
    code, _, err = cli("check", str(folder))
    assert code == 1
    errors = [line for line in err.splitlines() if "error[" in line]
    assert any("error[PLT-11]: cozystack.ouroboros" in line and "proxy.target.serviceName" in line for line in errors)
    assert any("error[PLT-11]: cozystack.kubevirt" in line and "pciHostDevices" in line for line in errors)
    assert any("error[PKG-04]: Variant galera not found in PackageSource cozystack.mariadb-operator" in line
               for line in errors)


def test_vendor_copies_a_checkout_and_the_catalogue_follows(tmp_path) -> None:
    """The documented vendoring script, on a fake checkout (into tmp_path, never the checkout)."""
    import json
    import shutil

    from renderer.platform_chart import CHARTS
    from renderer.platform_chart.catalogue import generate
    from renderer.platform_chart.vendor import vendor

    checkout = tmp_path / "cozystack"
    source = checkout / "packages" / "core" / "platform"
    shutil.copytree(CHARTS / "v1.6.2", source)
    (source / "tests").mkdir()
    (source / "tests" / "x_test.yaml").write_text("suite: x\ntests: []\n")
    (source / "Makefile").write_text("all:\n")
    charts, repo = tmp_path / "charts", tmp_path / "repo"
    target = vendor(checkout, "v1.6.2-copy", repo, charts)
    assert sorted(p.name for p in target.iterdir()) == sorted(p.name for p in (CHARTS / "v1.6.2").iterdir())
    assert (repo / "tests" / "platform_chart" / "suites" / "v1.6.2-copy" / "x_test.yaml").is_file()
    assert json.loads((charts / "vendored.json").read_text())["v1.6.2-copy"]["license"] == "Apache-2.0"
    assert generate(target)["emits"] == generate(CHARTS / "v1.6.2")["emits"]


@pytest.mark.parametrize(("value", "quoted"), [([True], '"[true]"'), ({"enabled": True}, '"map[enabled:true]"'),
                                               (1e6, '"1e+06"')])
def test_plt_10_quotes_the_chart_with_go_formatting(value, quoted, cluster, cli) -> None:
    from tests.conftest import overlay_doc

    folder = cluster(overlay_doc(platform={"variant": "isp-full", "version": "main-3c780ac",  # v1.6.2 never reads it
                                           "values": {"networking": {"stageCniPlugins": value}}}))
    code, _, err = cli("check", str(folder))
    assert code == 1
    assert f"error[PLT-10]: networking.stageCniPlugins: expected a boolean, got {quoted} -- leaving it unset" in err


SPRIG_INT_INPUTS = ["010", "4.5", True, False, "0x1f", "0xFF", "4.0", "4.", "10", " 10", "0", "-07", "+5", "1_000",
                    "0_7", "08", "0b101", "0o17", "12a", "", None, 4.9, -2.5, 7, "99999999999999999999", [1], {"a": 1}]


def test_helm_int_is_sprig_int_as_real_helm_computes_it(helm: str, tmp_path) -> None:
    """Go's number parsing (issue 19 item 4): iaas.yaml's `cpuAllocationRatio | int` gives 8 for "010"."""
    import json
    import subprocess

    from renderer.resolve.platform import helm_int

    chart = tmp_path / "ints"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: ints\nversion: 0.1.0\n")
    (chart / "templates" / "out.yaml").write_text(
        "ints:\n{{- range .Values.items }}\n  - {{ . | int }}\n{{- end }}\n")
    (tmp_path / "values.json").write_text(json.dumps({"items": SPRIG_INT_INPUTS}))
    done = subprocess.run([helm, "template", "x", str(chart), "-f", str(tmp_path / "values.json")],
                          capture_output=True, text=True, check=True, timeout=60)
    from ruamel.yaml import YAML

    rendered = YAML(typ="safe").load(done.stdout.split("---", 1)[-1])["ints"]
    assert [helm_int(v) for v in SPRIG_INT_INPUTS] == rendered


@pytest.mark.parametrize(("ratio", "rendered"), [("010", 8), ("4.5", 0), (True, 1), ("0", 0), (4, 4)])
def test_kubevirt_cpu_allocation_ratio_is_what_the_chart_renders(ratio, rendered) -> None:
    from renderer.load.variants import Variants
    from renderer.resolve.platform import PlatformFacts

    facts = PlatformFacts(Variants().catalogue(), "isp-full", {"resources": {"cpuAllocationRatio": ratio}})
    values = facts.rendered_packages["cozystack.kubevirt"].values
    assert values[("kubevirt", "values", "cpuAllocationRatio")] == rendered


def test_the_default_is_the_latest_vendored_release() -> None:
    from renderer.platform_chart import DEFAULT_VERSION, latest_release, shipped_versions

    assert DEFAULT_VERSION == latest_release(shipped_versions()) == "v1.6.2"
    assert latest_release(["main-3c780ac", "v1.6.2", "v1.10.0", "v1.7.0"]) == "v1.10.0"  # numeric, not text
    assert latest_release(["main-3c780ac"]) is None


def test_the_readme_supported_versions_table_is_generated_from_the_charts() -> None:
    from renderer.platform_chart import DEFAULT_VERSION, shipped_versions
    from renderer.platform_chart.catalogue import TABLE_END, TABLE_START
    from tests.conftest import REPO

    text = (REPO / "README.md").read_text(encoding="utf-8")  # the source tree's (the package may be installed)
    table = text[text.index(TABLE_START):text.index(TABLE_END)]
    rows = [line for line in table.splitlines() if line.startswith("| `") and "platform.version" not in line]
    assert [row.split("`")[1] for row in rows] == shipped_versions()
    assert [row for row in rows if "(default)" in row] == [r for r in rows if r.startswith(f"| `{DEFAULT_VERSION}`")]
    assert "`networking.encryption.enabled`" in next(r for r in rows if r.startswith("| `main-3c780ac`"))


URLS = ["https://api.example.org:6443", "https://a b:6443", "https://h:abc", "https://h%zz", "https://h:6443/%zz",
        "https://[::1]:6443", "https://[::1", "http://h:", "h:6443", "10.0.0.5:6443", ":6443", "https://h\u0001",
        "ht tp://h", "https://user@h:1", "https://us er@h:1", "https://h:6443?a=%zz", "https://h#%zz", "https://h%2",
        "https://h%41", "https://h%25x", "//h:1", "https://h/a b", "https://ünï.example:1", "https://h{}:1"]


@pytest.mark.parametrize("url", URLS)
def test_url_parse_is_gos_as_real_helm_runs_it(helm: str, tmp_path, url: str) -> None:
    """One Go url.Parse for PLT-13 and Hubble own (issue 19 item 2): helm's own host and error text."""
    import json
    import subprocess

    from renderer.resolve.features.hubble import go_url_host

    chart = tmp_path / "urls"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: urls\nversion: 0.1.0\n")
    (chart / "templates" / "out.yaml").write_text("host: {{ (urlParse .Values.url).host | quote }}\n")
    (tmp_path / "values.json").write_text(json.dumps({"url": url}))
    done = subprocess.run([helm, "template", "x", str(chart), "-f", str(tmp_path / "values.json")],
                          capture_output=True, text=True, check=False, timeout=60)
    if done.returncode == 0:
        from ruamel.yaml import YAML

        host = YAML(typ="safe").load(done.stdout.split("---", 1)[-1])["host"]
        assert url_parse_error(url) is None and go_url_host(url) == host
    else:
        error = next(line for line in done.stderr.splitlines() if line.startswith("Error: "))
        assert error.split("at <urlParse .Values.url>: ", 1)[1] == url_parse_error(url)
        with pytest.raises(ValueError):
            go_url_host(url)
