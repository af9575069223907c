"""Flux safety for committed output: ``${`` must reach the cluster as written.

Flux ``postBuild`` substitution rewrites every ``${var}`` (bash-like, ``${var:=default}``...) in each
object a Kustomization applies, and an undefined variable becomes the empty string: a shell
snippet in a ConfigMap or a Prometheus rule would silently change. An object carrying the annotation
``kustomize.toolkit.fluxcd.io/substitute: disabled`` is skipped (fluxcd/kustomize-controller
@186fb3b ``api/v1/kustomization_types.go`` and ``docs/spec/v1/kustomizations.md``, "Post build
variable substitution"; the value is ``DisabledValue``).

``render --out`` (the folders Flux users commit) therefore marks every object whose rendered text
contains ``${``; ``render`` to stdout and ``cmp generate`` (Argo CD, no substitution) do not.
An object whose annotations already name the key keeps the user's value: that is the way to ask
for Flux substitution on purpose. ``check`` warns (FLUX-SUBST) where a user's value looks like a
substitution variable, so nobody is surprised in either direction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from renderer.codes import Code
from renderer.errors import WARNING, Finding, Location

SUBSTITUTE_ANNOTATION = "kustomize.toolkit.fluxcd.io/substitute"
DISABLED = "disabled"

# What Flux's envsubst would read as a variable: ${ followed by a name (a $${ escape is not one).
_VARIABLE = re.compile(r"(?<!\$)\$\{([_A-Za-z][_A-Za-z0-9]*)")
_ESCAPED = re.compile(r"\$\$\{[_A-Za-z]")

CODES: list[Code] = [
    Code("FLUX-SUBST", WARNING, "A value looks like a Flux postBuild substitution variable",
         "Flux replaces ${var} in every object a Kustomization with postBuild applies (undefined ones become "
         "empty). `render --out` marks objects containing ${ with kustomize.toolkit.fluxcd.io/substitute: "
         "disabled, so the value reaches the cluster as written; to have Flux substitute it on purpose, set "
         "that annotation (to any other value) on the object yourself. A $${ escape is not needed and would "
         "stay literal.",
         "fluxcd/kustomize-controller docs/spec/v1/kustomizations.md, Post build variable substitution"),
]


def needs_protection(obj: dict[str, Any]) -> bool:
    """Whether Flux substitution could change ``obj``: its text (keys and values) holds ``${``."""
    return "${" in json.dumps(obj, ensure_ascii=False)


def disable_substitution(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``objects`` with the substitute-disabled annotation on each one that holds ``${`` (copies; the
    input is not changed). An annotation the object already has for that key is kept."""
    out = []
    for obj in objects:
        metadata = obj.get("metadata")
        annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
        if not needs_protection(obj) or not isinstance(metadata, dict) or \
                (annotations is not None and not isinstance(annotations, dict)) or \
                SUBSTITUTE_ANNOTATION in (annotations or {}):
            out.append(obj)
            continue
        marked = {**(annotations or {}), SUBSTITUTE_ANNOTATION: DISABLED}
        order = ("name", "namespace", "labels", "annotations")
        new_meta = {k: metadata[k] for k in order if k in metadata and k != "annotations"}
        new_meta["annotations"] = marked
        new_meta.update({k: v for k, v in metadata.items() if k not in new_meta})
        out.append({**obj, "metadata": new_meta})
    return out


def _strings(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str):
                yield path + (key,), key
            yield from _strings(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, path + (i,))
    elif isinstance(node, str):
        yield path, node


def _finding(text: str, where: Location | None) -> Finding | None:
    variable = _VARIABLE.search(text)
    if variable:
        return Finding("FLUX-SUBST", f"${{{variable.group(1)}}} looks like a Flux substitution variable; "
                       f"render --out marks the object {SUBSTITUTE_ANNOTATION}: {DISABLED} so it is applied as "
                       f"written (set the annotation yourself to let Flux substitute it)", where, WARNING)
    if _ESCAPED.search(text):
        return Finding("FLUX-SUBST", f"$${{ needs no escaping: render --out marks the object "
                       f"{SUBSTITUTE_ANNOTATION}: {DISABLED}, so $${{ would reach the cluster literally", where,
                       WARNING)
    return None


def opted_in(obj: Any) -> bool:
    """The user set the substitute annotation to anything but ``disabled`` (``enabled``): Flux is meant to
    substitute this object's ``${VAR}``, and render --out leaves the annotation as written."""
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return isinstance(annotations, dict) and SUBSTITUTE_ANNOTATION in annotations and \
        annotations[SUBSTITUTE_ANNOTATION] != DISABLED


def check(result: Any) -> list[Finding]:
    """FLUX-SUBST warnings for the user's own values: the merged overlay (after templating; ``vars``
    are reported where they are used) and objects read from ``manifests:`` files; never in an object
    the user opted in to substitution (``opted_in``)."""
    findings: dict[tuple[Any, ...], Finding] = {}
    overlay = result.overlay
    manifests = overlay.data.get("manifests")
    inline_opted_in = {i for i, m in enumerate(manifests) if opted_in(m)} if isinstance(manifests, list) else set()
    for path, text in _strings({k: v for k, v in overlay.data.items() if k != "vars"}, ()):
        if path[:1] == ("manifests",) and len(path) > 1 and path[1] in inline_opted_in:
            continue
        found = _finding(text, overlay.locate(path))
        if found is not None:
            findings.setdefault((found.location, found.message), found)
    for emitted in result.objects:
        if emitted.locs is None or opted_in(emitted.obj):
            continue  # built by cozy-render from the overlay (walked above), or opted in
        for path, text in _strings(emitted.obj, ()):
            found = _finding(text, emitted.locate(path, overlay))
            if found is not None:
                findings.setdefault((found.location, found.message), found)
    return list(findings.values())
