"""One module of a library without running its package's ``__init__`` first.

``import fastjsonschema.exceptions`` runs ``fastjsonschema/__init__.py`` before it, and that imports
every schema compiler and ``decimal``, which a cold render does not need: it needs only the two
exception classes its generated validators raise (``renderer.jsonschema_runtime``; what that saves
is measured in docs/startup-budget.md). Only fastjsonschema is read this way: it relies on nothing but
Python's import system, not on the library's internals.

``submodule`` registers the package with its ``__init__`` not yet run and imports the one module. The
first time anything asks the package for a name it does not hold yet (``fastjsonschema.compile``,
``from fastjsonschema import X``), the package's own ``__init__`` runs in that same module object, so
every class and function stays the one the library defines and later imports see the whole package.
"""

from __future__ import annotations

import sys
from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def submodule(package: str, name: str) -> ModuleType:
    """``package.name``, imported without ``package``'s ``__init__`` when the package is not loaded yet."""
    if package not in sys.modules:
        _defer_init(package)
    return import_module(f"{package}.{name}")


def _defer_init(package: str) -> None:
    parent, _, child = package.rpartition(".")
    search = import_module(parent).__path__ if parent else None
    spec = None
    for finder in sys.meta_path:  # how `import` finds it
        find = getattr(finder, "find_spec", None)
        spec = find(package, search) if find else None
        if spec is not None:
            break
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        import_module(package)  # not a plain package, or not one we can read: import it the ordinary way
        return
    from _thread import RLock
    from importlib.util import module_from_spec

    module = module_from_spec(spec)
    lock = RLock()
    state = {"started": False}

    def complete(attr: str) -> object:
        with lock:  # another thread waits here until the __init__ has run; this one, while it runs, passes
            if not state["started"]:
                state["started"] = True
                spec.loader.exec_module(module)
                if module.__dict__.get("__getattr__") is complete:
                    del module.__dict__["__getattr__"]
        if attr in module.__dict__:
            return module.__dict__[attr]
        own = module.__dict__.get("__getattr__")  # the package's own module __getattr__, if it has one
        if own is not None and own is not complete:
            return own(attr)
        raise AttributeError(f"module {package!r} has no attribute {attr!r}")

    module.__getattr__ = complete  # type: ignore[method-assign]  # PEP 562: consulted for missing names
    sys.modules[package] = module
    if parent:
        setattr(sys.modules[parent], child, module)  # as `import` binds a submodule to its parent
