"""The rule registry: one small unit per rule ID from the Cozystack reference, section (g).

A rule is declared with ``@rule(...)`` on a check function ``check(ctx: RuleContext) -> Iterable[Hit]``.
The registry is filled by importing the modules listed in ``_MODULES``; ``run_rules`` runs every
rule on a render result and turns hits into located findings.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any, NamedTuple

from renderer.errors import ERROR, WARNING, Finding, Location
from renderer.model import Emitted, RenderResult
from renderer.platform import PlatformFacts
from renderer.yamlio import Path_

_MODULES = (
    "renderer.rules.package",
    "renderer.rules.platform",
    "renderer.rules.gpu",
    "renderer.rules.hubble",
    "renderer.rules.network",
)


class Hit(NamedTuple):
    """A rule firing: the message, and where: an object path inside an emitted object or an overlay path."""

    message: str
    emitted: Emitted | None = None
    obj_path: Path_ = ()
    overlay_path: Path_ | None = None
    severity: str | None = None  # overrides the rule's default (rules whose severity depends on the case)


class Rule(NamedTuple):
    id: str
    severity: str
    summary: str
    explanation: str
    sources: tuple[str, ...]
    check: Callable[[RuleContext], Iterable[Hit]]


REGISTRY: dict[str, Rule] = {}


def rule(id: str, severity: str, summary: str, explanation: str, sources: Iterable[str]) -> Callable[..., Any]:
    assert severity in (ERROR, WARNING), severity

    def register(check: Callable[[RuleContext], Iterable[Hit]]) -> Callable[[RuleContext], Iterable[Hit]]:
        if id in REGISTRY:
            raise ValueError(f"rule {id} registered twice")
        REGISTRY[id] = Rule(id, severity, summary, explanation.strip(), tuple(sources), check)
        return check

    return register


def all_rules() -> dict[str, Rule]:
    for name in _MODULES:
        importlib.import_module(name)
    return dict(sorted(REGISTRY.items(), key=lambda kv: _rule_sort_key(kv[0])))


def _rule_sort_key(rule_id: str) -> tuple[str, int]:
    prefix, _, number = rule_id.partition("-")
    return (prefix, int(number) if number.isdigit() else 0)


class RuleContext:
    def __init__(self, result: RenderResult) -> None:
        self.result = result

    @property
    def overlay(self):
        return self.result.overlay

    @property
    def objects(self) -> list[Emitted]:
        return self.result.objects

    def packages(self) -> list[Emitted]:
        return [e for e in self.objects if e.is_package()]

    @cached_property
    def variants(self):
        """The variant data this render used: the shipped folder plus ``--variants``."""
        if self.result.variants is not None:
            return self.result.variants
        from renderer.variants import Variants

        return Variants()

    @cached_property
    def catalogue(self) -> dict[str, Any]:
        return self.variants.catalogue()

    @cached_property
    def facts(self) -> PlatformFacts:
        """What the platform chart will do with the rendered platform Package."""
        return PlatformFacts.from_objects(self.catalogue, self.objects)

    def data(self, relpath: str) -> dict[str, Any]:
        """A single-document data file from the variants folder (``gpu/facts.yaml``, ...)."""
        (doc,) = self.variants.load(relpath)
        return doc


def run_rules(result: RenderResult, only: Iterable[str] | None = None) -> list[Finding]:
    ctx = RuleContext(result)
    wanted = set(only) if only is not None else None
    findings: list[Finding] = []
    for rule_id, r in all_rules().items():
        if wanted is not None and rule_id not in wanted:
            continue
        for hit in r.check(ctx):
            findings.append(Finding(rule_id, hit.message, _where(hit, result), hit.severity or r.severity))
    return findings


def _where(hit: Hit, result: RenderResult) -> Location | None:
    if hit.overlay_path is not None:
        return result.overlay.locate(hit.overlay_path)
    if hit.emitted is not None:
        return hit.emitted.locate(hit.obj_path, result.overlay)
    return result.overlay.locate(())
