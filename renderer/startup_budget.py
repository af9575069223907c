"""The start-up budget, in one place: what a cold ``render PATH`` and ``cmp generate`` may load, what a
render-cache hit may load, and where a function-level import is allowed (each with its reason).

Argo CD runs ``cmp generate`` once per Application per refresh and CI runs ``render PATH`` per cluster,
so process start-up is paid thousands of times a day. docs/startup-budget.md explains each entry and
measures each trick that keeps start-up small (``bench/bench_startup.py --tricks``); its tables are
generated from this module (``python -m renderer.generate``), and tests/test_startup_imports.py and
tests/test_function_imports.py hold the code to it. Plain data: importing this costs nothing.
"""

# Libraries a cold render and `cmp generate` of the samples do not load (other commands do, or only some
# overlays need them): (module, why it stays off the path).
HEAVY: tuple[tuple[str, str], ...] = (
    ("click", "the command line parser: the two hot argument vectors skip it (renderer.entry.fast_path)"),
    ("jinja2", "templates that are plain lookups are substituted without it (renderer.load.templating)"),
    ("kubernetes", "diff and doctor against a live cluster only"),
    ("deepdiff", "diff only"),
    ("jsonschema", "the validators are generated fastjsonschema code"),
    ("yaml", "PyYAML: never needed by a render"),
    ("dataclasses", "pulls in inspect and builds each class with exec: requests are NamedTuples"),
    ("inspect", "imported by dataclasses and others"),
    ("tempfile", "only for writing files (render --out, the cache's store)"),
    ("asyncio", "never needed by a render"),
    ("ssl", "only for a live cluster"),
    ("http.client", "only for a live cluster"),
    ("email", "imported by http.client"),
    ("difflib", "diff only"),
    ("argparse", "maintainer tools only"),
    ("decimal", "fastjsonschema's generated code imports it; renderer.jsonschema_runtime stands in"),
    ("shutil", "with bz2, lzma and fnmatch; renderer.executables finds programs without it"),
    ("bz2", "imported by shutil"),
    ("lzma", "imported by shutil"),
)
# Modules of a library the render uses in part (a prefix covers its submodules): fastjsonschema's schema
# compilers (renderer.jsonschema_runtime imports its exceptions without the package's __init__,
# renderer.lightimport).
HEAVY_PARTS: tuple[tuple[str, str], ...] = (
    ("fastjsonschema.draft", "the schema compilers: the validators are generated ahead of time"),
    ("fastjsonschema.generator", "a schema compiler"),
    ("fastjsonschema.ref_resolver", "a schema compiler"),
)
# A render-cache hit (renderer.cache.replay) replays stored bytes: cozy-render's modules it may load, and
# libraries and standard modules it must not (each pulls in more than the whole replay needs).
HIT_MODULES: tuple[str, ...] = ("renderer.entry", "renderer.cache", "renderer.runner", "renderer.streams",
                                "renderer.load", "renderer.load.roots")
HIT_ABSENT: tuple[str, ...] = ("ruamel.yaml", "fastjsonschema", "jinja2", "click", "json", "re", "pathlib", "typing")

# Why a function-level import may stay (tests/test_function_imports.py refuses any other):
START_UP = "start-up path"  # the module is on a cold render's or cmp generate's path and this is not
OPTIONAL = "optional dependency"  # the library may be missing, or only some commands need it
CYCLE = "breaking a cycle"  # a top-level import would close an import cycle (tests/test_import_graph.py)
PENDING = "pending hoist"  # not justified by start-up yet: to be hoisted to the top of its module
REASONS = (START_UP, OPTIONAL, CYCLE, PENDING)
