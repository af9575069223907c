"""The server's warm-up leaves a worker nothing to load: every module a sample's render imports, every
pattern it compiles (re's cache, ruamel.yaml's and cozy-render's lazily compiled ones) is already in the
server, so a request pays for its render, not for imports or compiles."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.daemon.conftest import RUN_SECONDS, base_env

# warm_up() as `daemon serve` runs it, then each sample's `cmp generate` in a forked child of the warm
# process (a worker, minus the socket), reporting what its render had to import or compile.
PROBE = r"""
import os, re, sys
from renderer.daemon.server import warm_up
from renderer.lazyre import LazyPattern
warm_up()
import gc
lazies = [o for o in gc.get_objects() if type(o) is LazyPattern]
modules, patterns = set(sys.modules), set(re._cache)
compiled = {id(o): dict(vars(o)) for o in lazies}
report = os.dup(1)  # the probe's stdout; each render's goes nowhere
root = sys.argv[1]
for name in sorted(os.listdir(os.path.join(root, "clusters"))):
    pid = os.fork()
    if pid == 0:
        os.chdir(os.path.join(root, "clusters", name))
        os.environ["ARGOCD_APP_SOURCE_PATH"] = f"clusters/{name}"
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        sys.argv = ["cozy-render", "cmp", "generate"]
        from renderer.entry import main
        try:
            main()
        except SystemExit:
            pass
        new = sorted(set(sys.modules) - modules) + sorted(k[1] for k in set(re._cache) - patterns)
        new += [o.pattern for o in lazies if set(vars(o)) != set(compiled[id(o)])]
        os.write(report, f"{name} {new}\n".encode())
        os._exit(0)
    os.waitpid(pid, 0)
"""


def test_a_worker_imports_and_compiles_nothing_the_server_could_have(samples: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(samples)], env=base_env(), cwd=samples,
                          capture_output=True, text=True, timeout=RUN_SECONDS)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in (samples / "clusters").iterdir())
    assert proc.stdout.splitlines() == [f"{name} []" for name in names]
