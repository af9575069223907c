"""The rule registry: one small unit per rule ID from the Cozystack reference, section (g).

A rule is declared with ``@rule(...)`` on a check function ``check(ctx: RuleContext) -> Iterable[Hit]``;
the decorator attaches the ``Rule`` to the function and registers nothing. ``all_rules`` builds the
registry as one explicit list: the rules of the modules named in ``RULE_MODULES``, in that order.
``run_rules`` runs every rule on a render result and turns hits into located findings. Codes that
are not reference rules (``OVL-*``, ``CMP-*``, ...) are in ``renderer.codes``; ``renderer.registry``
joins the two.
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

import importlib
from collections.abc import Callable, Iterable
from functools import cache, cached_property
from typing import Any, NamedTuple, TypeVar

from renderer.emit import RenderResult
from renderer.errors import ERROR, WARNING, Finding, Location
from renderer.load.yamlio import Path_
from renderer.model import Emitted
from renderer.resolve.platform import PlatformFacts, PlatformView

RULE_MODULES = (
    "renderer.check.rules.package",
    "renderer.check.rules.platform",
    "renderer.check.rules.gpu",
    "renderer.check.rules.hami",
    "renderer.check.rules.hubble",
    "renderer.check.rules.network",
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
    check: "Callable[[RuleContext], Iterable[Hit]]"
    # Rules that report some cases of this one more specifically: this rule leaves those cases to them
    # (one report per problem). Documentation, and a test keeps every name registered.
    deferred_to: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        return self.id.partition("-")[0]


def rule(id: str, severity: str, summary: str, explanation: str, sources: Iterable[str],
         deferred_to: Iterable[str] = ()) -> Callable[..., Any]:
    assert severity in (ERROR, WARNING), severity

    def declare(check: "Callable[[RuleContext], Iterable[Hit]]") -> "Callable[[RuleContext], Iterable[Hit]]":
        # The declaration travels with its function; all_rules() collects it from the module.
        vars(check)["rule"] = Rule(id, severity, summary, explanation.strip(), tuple(sources), check,
                                   tuple(deferred_to))
        return check

    return declare


@cache
def all_rules() -> dict[str, Rule]:
    """The registry: every rule of every module in ``RULE_MODULES``, ordered by family and number."""
    return collect_rules(RULE_MODULES)


def collect_rules(modules: Iterable[str]) -> dict[str, Rule]:
    """Every rule declared in ``modules`` (dotted names), ordered by family and number."""
    found: dict[str, Rule] = {}
    for name in modules:
        module = importlib.import_module(name)
        for value in vars(module).values():
            declared = getattr(value, "rule", None)
            if isinstance(declared, Rule) and declared.check is value:
                if declared.id in found:
                    raise ValueError(f"rule {declared.id} declared twice")
                found[declared.id] = declared
    return dict(sorted(found.items(), key=lambda kv: _rule_sort_key(kv[0])))


def _rule_sort_key(rule_id: str) -> tuple[str, int]:
    prefix, _, number = rule_id.partition("-")
    return (prefix, int(number) if number.isdigit() else 0)


T = TypeVar("T")


class RuleContext:
    def __init__(self, result: RenderResult, platform: PlatformView | None = None) -> None:
        self.result = result
        self._platform = platform
        self._memo: dict[str, Any] = {}

    @property
    def platform(self) -> PlatformView:
        """What the platform release renders, from the one source the check stage chose (the real
        chart through helm, or the model); every rule that needs it reads it here."""
        return self._platform if self._platform is not None else self.facts.view

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """A value several rules share, computed once per render (the GPU view, the PackageSources)."""
        if key not in self._memo:
            self._memo[key] = compute()
        value: T = self._memo[key]
        return value

    @property
    def overlay(self):
        return self.result.overlay

    @property
    def objects(self) -> list[Emitted]:
        return self.result.objects

    def packages(self) -> list[Emitted]:
        """The render's Packages (a fresh list: asked by most rules, filtered once per render)."""
        if self._packages is None:
            self._packages = tuple(e for e in self.objects if e.is_package())
        return list(self._packages)

    _packages: tuple[Emitted, ...] | None = None

    @cached_property
    def variants(self):
        """The variant data this render used: the shipped folder plus ``--variants``."""
        if self.result.variants is not None:
            return self.result.variants
        from renderer.load.variants import Variants

        return Variants()

    @cached_property
    def catalogue(self) -> dict[str, Any]:
        return self.variants.catalogue()

    @cached_property
    def facts(self) -> PlatformFacts:
        """What the platform chart will do with the rendered platform Package (from the plan)."""
        return self.result.plan.facts

    def data(self, relpath: str) -> dict[str, Any]:
        """A single-document data file from the variants folder (``gpu/facts.yaml``, ...)."""
        (doc,) = self.variants.load(relpath)
        return doc


def run_rules(result: RenderResult, only: Iterable[str] | None = None,
              registry: dict[str, Rule] | None = None, platform: PlatformView | None = None) -> list[Finding]:
    """Findings of every rule (or of the IDs in ``only``) of ``registry`` (default: all rules).
    ``platform``: what the platform renders, when the check stage has helm's answer (default: the
    chart model's, ``result.plan.facts.view``)."""
    ctx = RuleContext(result, platform)
    wanted = set(only) if only is not None else None
    findings: list[Finding] = []
    try:
        for rule_id, r in (all_rules() if registry is None else registry).items():
            if wanted is not None and rule_id not in wanted:
                continue
            for hit in r.check(ctx):
                findings.append(Finding(rule_id, hit.message, _where(hit, result), hit.severity or r.severity))
    finally:
        # Shared values hold the context (the GPU view does): a cycle that would keep the whole render
        # alive until the garbage collector runs; emptied here, it is freed at once (issue 24).
        ctx._memo.clear()
    return findings


def _where(hit: Hit, result: RenderResult) -> Location | None:
    if hit.overlay_path is not None:
        return result.overlay.locate(hit.overlay_path)
    if hit.emitted is not None:
        return hit.emitted.locate(hit.obj_path, result.overlay)
    return result.overlay.locate(())
