"""The registry of every code cozy-render can print: the reference rules (``renderer.check.rules``) and the
input, contradiction, integration, schema and I/O codes (``renderer.codes``).

``cozy-render rules`` lists it grouped by family; ``cozy-render rules CODE`` explains any entry;
``docs/rules.md`` is generated from it.
"""

from __future__ import annotations

import re
import textwrap
from typing import NamedTuple

from renderer.check.rules import all_rules
from renderer.codes import FAMILIES, all_codes

# Section titles of reference (g), by rule-ID prefix, in the reference's order.
RULE_FAMILIES = {
    "PKG": "Package / PackageSource API",
    "PLT": "Platform Package",
    "GPU": "GPU operator",
    "HAMI": "HAMi",
    "HUB": "Hubble",
    "NET": "VLAN / multus",
}
FAMILY_TITLES = {**RULE_FAMILIES, **FAMILIES}


class Entry(NamedTuple):
    id: str
    severity: str
    summary: str
    explanation: str
    sources: tuple[str, ...]
    family: str
    is_rule: bool
    deferred_to: tuple[str, ...] = ()
    severities: tuple[tuple[str, str], ...] = ()  # (severity, when), for a code printed at two severities

    @property
    def shown_severity(self) -> str:
        """``error``, ``warning``, or ``error|warning`` for a code whose severity depends on the case."""
        return "|".join(dict.fromkeys(s for s, _ in self.severities)) if self.severities else self.severity


# Codes printed at either severity, and when each applies (the rules' explanations say the same at length;
# tests/commands/test_rules.py fails when a rule overrides its severity and is not listed here).
SEVERITIES: dict[str, tuple[tuple[str, str], ...]] = {
    "PLT-10": (("error", "the system bundle renders isp-full or isp-full-generic (the chart reads the value)"),
               ("warning", "any other configuration: the value is ignored")),
    "PLT-11": (("error", "the Package sets a key the platform renders for it to a different value"),
               ("warning", "it only adds keys: co-managed, the documented way to tune a child Package")),
    "GPU-14": (("error", "default (passthrough) with gpu.replaceDefaults: true and no pciHostDevices"),
               ("warning", "vgpu without pciHostDevices or mediatedDevices and without the mdev table "
                           "(the out-of-the-box state)")),
}

# Upstream sources are written C:path (cozystack/cozystack at the commit the default chart was vendored
# from) and W:path (cozystack/website, content/en/docs/next/); users get links.
COZYSTACK_COMMIT = "3c780acd417f086f8f18d040d0d7020ff55d3ba3"  # renderer/platform_chart/charts/vendored.json
_UPSTREAM = {"C": f"https://github.com/cozystack/cozystack/blob/{COZYSTACK_COMMIT}/",
             "W": "https://github.com/cozystack/website/blob/main/content/en/docs/next/"}
_ABBREVIATED = re.compile(r"(?<![A-Za-z])([CW]):([A-Za-z0-9_.\-/*{},]+)")
# Internal pointers (the project's issue tracker, its domain reference and design notes) as what a user
# can open: the README section or file in this repository that says the same.
# The domain reference's sections, by the upstream source each was written from.
_REFERENCE = {"a": "C:api/v1alpha1/package_types.go", "b": "C:packages/core/platform/values.yaml",
              "c": "C:packages/core/platform/sources/gpu-operator.yaml", "f": "W:networking/vm-external-vlan.md"}
_INTERNAL = (
    (re.compile(r"^issue 10, Vendor the platform chart$"),
     "renderer/platform_chart/charts/README.md (the vendored charts: source, commit, licence)"),
    (re.compile(r"^design\.md, "), "README, "),
    (re.compile(r"reference/validation-and-live-state\.md( section \d+)?"), "README, Schema validation and Diff"),
    (re.compile(r"^reference/gitops-anchors\.md [0-9.]+, "), "README, Argo CD: "),
    (re.compile(r"^reference/platform-chart/README\.md, "), "README, Effective platform: "),
    (re.compile(r"^SECURITY: "), "SECURITY.md: "),
    (re.compile(r"\s*\(issue \d+\)"), ""),
    (re.compile(r"\(issue \d+, "), "("),
    (re.compile(r"^issue \d+: "), "README, "),
)


def public_source(raw: str) -> str:
    """A source as a user can follow it: upstream files as links, internal pointers as README sections."""
    def link(found: re.Match[str]) -> str:
        path = found.group(2)
        wild = re.search(r"[*{]", path)
        if wild is None:
            return _UPSTREAM[found.group(1)] + path
        folder, _, _ = path[:wild.start()].rpartition("/")
        return _UPSTREAM[found.group(1)].replace("/blob/", "/tree/") + folder + f" ({path[len(folder) + 1:]})"

    text = re.sub(r"^reference \(([a-f])\)", lambda m: _REFERENCE.get(m.group(1), m.group(0)), raw)
    text = _ABBREVIATED.sub(link, text)
    for pattern, replacement in _INTERNAL:
        text = pattern.sub(replacement, text)
    return text


def entries() -> dict[str, Entry]:
    """Rules first (reference (g) order), then the other codes by family; registry order within."""
    rank = {family: i for i, family in enumerate(FAMILY_TITLES)}
    found = [Entry(r.id, r.severity, r.summary, r.explanation, tuple(map(public_source, r.sources)), r.family,
                   True, r.deferred_to, SEVERITIES.get(r.id, ())) for r in all_rules().values()]
    found += [Entry(c.id, c.severity, c.summary, c.explanation, tuple(map(public_source, c.sources)), c.family,
                    False, (), SEVERITIES.get(c.id, ())) for c in all_codes().values()]
    indexed = sorted(enumerate(found), key=lambda ie: (rank.get(ie[1].family, len(rank)), ie[1].family, ie[0]))
    return {e.id: e for _, e in indexed}


def explanation_text(entry: Entry) -> str:
    """The explanation as written in the code, with the code's indentation removed."""
    first, _, rest = entry.explanation.partition("\n")
    body = textwrap.dedent(rest).strip("\n")
    text = f"{first.strip()}\n{body}".strip() if body else first.strip()
    if entry.deferred_to:
        text += f"\n\nCases that {', '.join(entry.deferred_to)} report more specifically are left to them."
    return text
