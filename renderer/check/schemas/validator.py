"""The built-in validator: fastjsonschema code, no jsonschema import, kubeconform's semantics.

Two passes per object. The fast pass runs the pre-generated module for the kind
(``renderer/_generated/schema_validators/``, one per kind; for a non-default Kubernetes version the
same code is generated in memory once): it only answers valid/invalid, which is all a clean render
needs. When it says invalid, the detailed pass compiles the schema with fastjsonschema's detailed
errors, collecting every error rather than the first, and each becomes a ``SchemaError`` with the
object path, a kubeconform-style message and the path to point the user at. Only failing renders pay
for that pass.

Semantics follow kubeconform: draft-04 (no ``$schema`` in the files), formats asserted where known
(``date-time``), unknown formats (``int32``, ``int64``, ``byte``) ignored, kinds without a schema
skipped (as with ``-ignore-missing-schemas``).
"""

# No `from __future__ import annotations`: typing.NamedTuple compiles every string annotation
# (renderer/requests.py says why that matters at start-up).

from collections.abc import Callable
from typing import Any, NamedTuple

from renderer.check.schemas import catalog
from renderer.jsonschema_runtime import JsonSchemaException, JsonSchemaValueException

Path_ = tuple[Any, ...]
KEY = None  # renderer.load.yamlio.KEY: a path ending in it locates the mapping key rather than its value


class SchemaError(NamedTuple):
    path: Path_  # the value the error is about (kubeconform's convention: an object, for missing keys)
    message: str
    focus: Path_  # where to point the user: a value, or with KEY at the end the key that names it

    @property
    def pointer(self) -> str:
        return pointer(self.path)


def pointer(path: Path_) -> str:
    """RFC 6901 JSON pointer, as kubeconform prints it; ``/`` for the whole object."""
    if not path:
        return "/"
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


_FAST: dict[tuple[str, str | None], Callable[[Any], Any]] = {}
_DETAILED: dict[tuple[str, str | None], Callable[[Any], Any]] = {}


class BuiltinValidator:
    """Validates objects for one Kubernetes version; validators are compiled once per process."""

    def __init__(self, kubernetes_version: str | None = None) -> None:
        self.kubernetes_version = catalog.normalize_kubernetes_version(kubernetes_version)

    def has_schema(self, obj: dict[str, Any]) -> bool:
        return catalog.lookup(str(obj.get("apiVersion", "")), str(obj.get("kind", ""))) is not None

    def is_valid(self, obj: dict[str, Any]) -> bool:
        """The fast pass alone; True for kinds without a schema."""
        fast = self._fast(obj)
        if fast is None:
            return True
        try:
            fast(obj)
        except JsonSchemaException:
            return False
        return True

    def errors(self, obj: dict[str, Any]) -> list[SchemaError]:
        if self.is_valid(obj):
            return []
        return self._details(obj)

    def _key(self, obj: dict[str, Any]) -> tuple[str, str | None] | None:
        """(schema id, Kubernetes version or None for CRD schemas, which do not depend on it)."""
        found = catalog.lookup(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if found is None:
            return None
        sid, is_crd = found
        return sid, None if is_crd else self.kubernetes_version

    def _fast(self, obj: dict[str, Any]) -> Callable[[Any], Any] | None:
        key = self._key(obj)
        if key is None:
            return None
        fn = _FAST.get(key)
        if fn is None:
            fn = _FAST[key] = _load_fast(obj, *key)
        return fn

    def _details(self, obj: dict[str, Any]) -> list[SchemaError]:
        key = self._key(obj)
        assert key is not None, "only called after the fast pass found a schema"
        fn = _DETAILED.get(key)
        if fn is None:
            fn = _DETAILED[key] = _compile(obj, key[1], detailed=True)
        try:
            fn(obj)
        except JsonSchemaValueException as exc:
            return [describe(exc, obj)]
        except JsonSchemaException as exc:  # JsonSchemaValuesException (fast_fail=False) carries them all
            return [describe(e, obj) for e in getattr(exc, "errors", [])] or [_disagree()]
        return [_disagree()]


def _disagree() -> SchemaError:
    # Both passes come from one schema; if they ever disagree, say so rather than pass silently.
    return SchemaError((), "invalid (the detailed validator found no error; please report this)", ())


def _load_fast(obj: dict[str, Any], sid: str, version: str | None) -> Callable[[Any], Any]:
    if version is None or version == catalog.DEFAULT_KUBERNETES_VERSION:
        # __import__ rather than importlib.import_module: same effect, and `python -X importtime`
        # only reports imports that go through it, which is how start-up cost is measured here.
        module = __import__(f"{catalog.COMPILED_PACKAGE}.{catalog.module_name(sid, version)}", fromlist=["validate"])
        return module.validate
    return _compile(obj, version, detailed=False)


def _compile(obj: dict[str, Any], version: str | None, detailed: bool) -> Callable[[Any], Any]:
    import fastjsonschema

    from renderer.check.schemas import store

    schema = store.for_compiler(store.schema_for(str(obj["apiVersion"]), str(obj["kind"]),
                                                 version or catalog.DEFAULT_KUBERNETES_VERSION))
    # use_default=False: fastjsonschema would otherwise write schema defaults into the object.
    options: dict[str, Any] = {"use_default": False, "detailed_exceptions": detailed}
    if detailed:
        try:
            return fastjsonschema.compile(schema, fast_fail=False, **options)
        except TypeError:  # fastjsonschema < 2.21 has no fast_fail: first error only
            pass
    return fastjsonschema.compile(schema, **options)


# --- messages ------------------------------------------------------------------------------------

def describe(exc: Any, obj: Any) -> SchemaError:
    """A fastjsonschema error as kubeconform would phrase it (santhosh-tekuri/jsonschema wording)."""
    path = resolve_name(exc.name or "data", obj)
    rule, value, want = exc.rule, exc.value, exc.rule_definition
    definition = exc.definition if isinstance(exc.definition, dict) else {}
    if rule == "type":
        types = [want] if isinstance(want, str) else list(want or [])
        return SchemaError(path, f"got {_typed(value)}, want {' or '.join(types)}", path)
    if rule == "required" and isinstance(value, dict):
        missing = [k for k in want if k not in value]
        noun = "property" if len(missing) == 1 else "properties"
        return SchemaError(path, f"missing {noun} {_names(missing)}", path + (KEY,) if path else path)
    if rule == "additionalProperties" and isinstance(value, dict):
        extra = _additional(value, definition)
        focus = path + (extra[0], KEY) if extra else path
        return SchemaError(path, f"additional properties {_names(extra)} not allowed", focus)
    if rule in ("enum", "const"):
        allowed = want if rule == "enum" else [want]
        return SchemaError(path, f"value must be one of {', '.join(_quote(a) for a in allowed)}", path)
    if rule == "pattern":
        return SchemaError(path, f"{_quote(value)} does not match pattern {_quote(want)}", path)
    if rule == "format":
        return SchemaError(path, f"{_quote(value)} is not valid {_quote(want)}", path)
    if rule in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
        return SchemaError(path, f"{rule}: got {len(value)}, want {want}", path)
    if rule in ("minimum", "maximum"):
        return SchemaError(path, f"{rule}: got {value}, want {want}", path)
    if rule in ("oneOf", "anyOf") and isinstance(want, list):
        types = [s.get("type") for s in want if isinstance(s, dict)]
        if types and all(isinstance(t, str) for t in types) and len(types) == len(want):
            return SchemaError(path, f"got {_typed(value)}, want {' or '.join(types)}", path)
        return SchemaError(path, f"{rule} failed, none matched", path)
    message = exc.message
    name = exc.name or ""
    if name and message.startswith(name + " "):
        message = message[len(name) + 1:]
    return SchemaError(path, message, path)


def _additional(value: dict[str, Any], definition: dict[str, Any]) -> list[str]:
    import re

    known = definition.get("properties") or {}
    patterns = [re.compile(p) for p in (definition.get("patternProperties") or {})]
    return sorted(str(k) for k in value if k not in known and not any(p.search(str(k)) for p in patterns))


def _names(keys: list[Any]) -> str:
    return ", ".join(f"'{k}'" for k in keys)


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    import json

    return json.dumps(value)


def _typed(value: Any) -> str:
    """JSON type name, with the value when it is a short scalar (`string "yes"`)."""
    import json

    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {json.dumps(value)}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value}"
    if isinstance(value, str):
        return f"string {json.dumps(value)}" if len(value) <= 40 else "string"
    if isinstance(value, list):
        return "array"
    return "object"


def resolve_name(name: str, data: Any) -> Path_:
    """fastjsonschema's ``data.spec.a.b[0]`` back into a path, resolved against the object itself.

    The name joins keys with dots without escaping, so ``metadata.labels.app.kubernetes.io/name``
    is ambiguous as text; walking the real object picks the keys that exist.
    """
    rest = name[4:] if name.startswith("data") else name
    found = _walk(rest, data)
    if found is not None:
        return found
    return tuple(p for p in rest.replace("[", ".").replace("]", "").split(".") if p)


def _walk(rest: str, node: Any) -> Path_ | None:
    if not rest:
        return ()
    if rest[0] == "[" and isinstance(node, list):
        end = rest.find("]")
        index = rest[1:end]
        if end > 1 and index.isdigit() and int(index) < len(node):
            tail = _walk(rest[end + 1:], node[int(index)])
            if tail is not None:
                return (int(index),) + tail
        return None
    if rest[0] == "." and isinstance(node, dict):
        body = rest[1:]
        for key in sorted(node, key=lambda k: -len(str(k))):
            text = str(key)
            if not body.startswith(text) or (len(body) > len(text) and body[len(text)] not in ".["):
                continue
            tail = _walk(body[len(text):], node[key])
            if tail is not None:
                return (key,) + tail
    return None
