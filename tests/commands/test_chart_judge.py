"""One judge of the platform chart: every command that consults it takes --chart (model by default,
helm when --helm names a binary), and what it prints names a judge other than the default."""

from __future__ import annotations

import json

import pytest

from tests.conftest import OVERLAYS

SAMPLE = str(OVERLAYS / "clusters" / "gpu-apt-01")


@pytest.mark.parametrize("command", [["check"], ["render"], ["effective"], ["diff"]])
def test_every_command_that_consults_the_chart_takes_chart(cli, command: list[str]) -> None:
    code, out, _ = cli(*command, "--help")
    assert code == 0 and "--chart [model|helm|auto]" in out


def test_cmp_takes_the_chart_as_a_parameter() -> None:
    from renderer.cmp import CHART_MODES

    assert tuple(CHART_MODES) == ("model", "helm", "auto")


def test_render_names_helm_when_it_judges_and_says_nothing_for_the_default(cli, helm: str) -> None:
    code, default_out, default_err = cli("render", SAMPLE)
    assert code == 0 and "platform chart:" not in default_err
    code, helm_out, helm_err = cli("render", SAMPLE, "--helm", helm)
    assert code == 0 and helm_err.startswith("cozy-render: platform chart: helm ")
    assert helm_out == default_out  # the judge decides findings, never the manifests


def test_the_chart_choice_is_resolved_once_for_every_command() -> None:
    from renderer.effective.choice import choose

    assert choose().mode == choose(None, None).mode == "model"
    assert choose("model", "/nonexistent/helm").mode == "model"  # said explicitly: helm is never run


def test_effective_names_its_judge_in_every_format(cli, helm: str) -> None:
    for judge, expected in ((["--chart", "model"], "model"), (["--helm", helm], "helm")):
        code, out, _ = cli("effective", SAMPLE, "-o", "json", *judge)
        assert code == 0 and json.loads(out)["chart"]["mode"] == expected
        code, out, _ = cli("effective", SAMPLE, "-o", "table", *judge)
        assert code == 0 and ("rendered by helm" if expected == "helm" else "predicted by the built-in model") in out
