"""Turn CRDs and kubernetes-validate's schemas into the JSON schemas we validate with (build time only).

CRDs: a re-implementation of kubeconform's ``scripts/openapi2jsonschema.py`` (v0.7.0), quirks included,
so our files match what a kubeconform user would generate from the same CRD:

1. every nested dict that has ``properties`` and no ``additionalProperties`` gets
   ``additionalProperties: false``, whatever its ``type`` and regardless of ``-strict``;
2. the root is exempt (upstream's ``DENY_ROOT_ADDITIONAL_PROPERTIES`` unset);
3. the walk recurses into dict values only, never into lists, so subschemas inside
   ``allOf``/``anyOf``/``oneOf`` keep their openness;
4. it visits every dict value, ``properties`` maps included: an object with a field literally named
   ``properties`` makes its ``properties`` map gain a bogus ``additionalProperties: false`` entry
   (a property named "additionalProperties" that nothing may set);
5. afterwards any subschema with ``format: int-or-string`` is replaced, whole, by
   ``{"oneOf": [{"type": "string"}, {"type": "integer"}]}`` (this walk does enter lists);
6. ``x-kubernetes-*`` keys are copied as they are (validators ignore them); ``nullable`` and
   defaults are not emulated (upstream's ``allow_null_optional_fields`` is never called);
7. one file per ``spec.versions[]`` entry that has ``schema.openAPIV3Schema`` (else the legacy
   ``spec.validation.openAPIV3Schema``), named ``{kind}_{version}`` lower-cased, JSON with
   2-space indentation and a trailing newline.

One deliberate deviation: upstream also closes a dict that carries
``x-kubernetes-preserve-unknown-fields: true`` next to ``properties`` (yannh/kubeconform#224, fix
in the still-open #225), which rejects objects the API server accepts. We leave such a dict open.
None of the three bundled CRDs has that combination (``spec.components.*.values`` in Package is
preserve-unknown *without* ``properties``, so it stays open either way), so our files equal upstream's
output byte for byte; the deviation only matters for CRDs added later.

Core kinds: kubernetes-validate ships per-version ``{kind}-{group}-{version}.json`` files (JSON
Schema 2020-12) that ``$ref`` a shared ``_definitions.json``. We keep only the definitions the
bundled kinds reach, rewrite ``$ref`` to draft-04 ``#/definitions/NAME`` (the keywords they use are
all draft-04 ones, which the build asserts), and drop annotations (``description``,
``x-kubernetes-*``) that no validator reads.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

INT_OR_STRING = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
PRESERVE_UNKNOWN = "x-kubernetes-preserve-unknown-fields"


# --- CRDs: openapi2jsonschema -------------------------------------------------------------------

def additional_properties(data: Any, skip: bool = False) -> Any:
    """Upstream ``additional_properties`` (rules 1-4), minus the preserve-unknown-fields bug."""
    if isinstance(data, dict):
        if "properties" in data and not skip and "additionalProperties" not in data \
                and data.get(PRESERVE_UNKNOWN) is not True:
            data["additionalProperties"] = False
        for value in data.values():
            additional_properties(value)
    return data


def replace_int_or_string(data: Any) -> Any:
    """Upstream ``replace_int_or_string`` (rule 5): only values are replaced, never ``data`` itself."""
    if not isinstance(data, dict):
        return data
    new: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            if value.get("format") == "int-or-string":
                new[key] = copy.deepcopy(INT_OR_STRING)
            else:
                new[key] = replace_int_or_string(value)
        elif isinstance(value, list):
            new[key] = [replace_int_or_string(item) for item in value]
        else:
            new[key] = value
    return new


def crd_schemas(crd: dict[str, Any], deny_root_additional_properties: bool = False) -> dict[str, dict[str, Any]]:
    """``{filename: schema}`` for one CRD document, as upstream's script would write them (rule 7)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    out: dict[str, dict[str, Any]] = {}
    legacy = (spec.get("validation") or {}).get("openAPIV3Schema")
    found: list[tuple[str, Any]] = []
    if spec.get("versions"):
        for version in spec["versions"]:
            if "openAPIV3Schema" in (version.get("schema") or {}):
                found.append((version["name"], version["schema"]["openAPIV3Schema"]))
            elif legacy is not None:
                found.append((version["name"], legacy))
    elif legacy is not None:  # apiextensions v1beta1: one `spec.version`
        found.append((spec["version"], legacy))
    for version_name, schema in found:
        filename = f"{names['kind']}_{version_name}".lower() + ".json"
        schema = additional_properties(copy.deepcopy(schema), skip=not deny_root_additional_properties)
        out[filename] = replace_int_or_string(schema)
    return out


def crd_documents(documents: Iterable[Any]) -> list[dict[str, Any]]:
    """The CustomResourceDefinition documents of a stream, ``List`` items expanded (upstream's loop)."""
    defs: list[dict[str, Any]] = []
    for doc in documents:
        if not isinstance(doc, dict):
            continue
        if isinstance(doc.get("items"), list):
            defs.extend(i for i in doc["items"] if isinstance(i, dict) and i.get("kind") == "CustomResourceDefinition")
        if doc.get("kind") == "CustomResourceDefinition":
            defs.append(doc)
    return defs


def dump_schema(schema: dict[str, Any]) -> str:
    """Upstream writes ``json.dumps(schema, indent=2)`` through ``print``."""
    return json.dumps(schema, indent=2) + "\n"


# --- core kinds: kubernetes-validate ------------------------------------------------------------

# Keywords whose value is a schema, a list of schemas, or a map of schemas: the walk rewrites these.
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
_SCHEMA_VALUES = ("additionalProperties", "items", "not", "additionalItems")
# Everything else a kubernetes-validate schema may use, all with the same meaning in draft-04.
_DRAFT4_KEYWORDS = frozenset((
    "$ref", "type", "enum", "format", "required", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties",
    "multipleOf", "default",
)) | frozenset(_SCHEMA_MAPS + _SCHEMA_LISTS + _SCHEMA_VALUES)
_DROPPED = ("description", "$schema", "$id", "discriminator", "x-kubernetes-")


def _ref_name(ref: str) -> str:
    for prefix in ("/api/_definitions.json#/$defs/", "#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            return ref[len(prefix):]
    raise ValueError(f"unexpected $ref {ref!r}")


def to_draft4(node: Any, defs: dict[str, Any], reached: dict[str, Any], where: str = "#") -> Any:
    """A copy of ``node`` with draft-04 refs into ``reached`` (filled with every definition it needs)."""
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        extra = [k for k in node if k != "$ref" and not k.startswith(_DROPPED)]
        if extra:  # draft-04 ignores $ref siblings; 2020-12 applies them: refuse rather than differ
            raise ValueError(f"{where}: $ref with sibling keywords {extra}")
        name = _ref_name(node["$ref"])
        if name not in reached:
            reached[name] = {}  # placeholder first: recursive definitions terminate
            reached[name] = to_draft4(defs[name], defs, reached, f"#/definitions/{name}")
        return {"$ref": f"#/definitions/{name}"}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith(_DROPPED):
            continue
        if key not in _DRAFT4_KEYWORDS:
            raise ValueError(f"{where}: keyword {key!r} is not draft-04; extend the converter deliberately")
        if key in _SCHEMA_MAPS:
            out[key] = {k: to_draft4(v, defs, reached, f"{where}/{key}/{k}") for k, v in value.items()}
        elif key in _SCHEMA_LISTS:
            out[key] = [to_draft4(v, defs, reached, f"{where}/{key}/{i}") for i, v in enumerate(value)]
        elif key in _SCHEMA_VALUES:
            out[key] = to_draft4(value, defs, reached, f"{where}/{key}") if isinstance(value, dict) else value
        else:
            out[key] = value
    return out


def core_bundle(kind_schemas: dict[str, dict[str, Any]], defs: dict[str, Any]) -> dict[str, Any]:
    """One version's bundle: ``{"kinds": {id: root}, "definitions": {name: schema}}`` (shared definitions)."""
    reached: dict[str, Any] = {}
    kinds = {sid: to_draft4(root, defs, reached, sid) for sid, root in sorted(kind_schemas.items())}
    return {"kinds": kinds, "definitions": dict(sorted(reached.items()))}


def standalone(root: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """A kind's root plus only the definitions it reaches, as one self-contained draft-04 schema."""
    needed: dict[str, None] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/definitions/"):
                name = ref[len("#/definitions/"):]
                if name not in needed:
                    needed[name] = None
                    walk(definitions[name])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(root)
    out = dict(root)
    if needed:
        out["definitions"] = {name: definitions[name] for name in sorted(needed)}
    return out
