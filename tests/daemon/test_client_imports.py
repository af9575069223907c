"""The client runs on every Argo CD refresh: with the daemon serving, `cmp generate` imports the entry
point and the daemon's client, never the render's libraries (issue 24's start-up budget)."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

from tests.daemon.conftest import base_env
from tests.test_startup_imports import loaded

CLIENT_MODULES = {"renderer", "renderer.entry", "renderer.daemon", "renderer.daemon.client",
                  "renderer.daemon.protocol"}


def test_a_served_cmp_generate_imports_only_the_client(start_daemon, samples: Path, package_copy: Path) -> None:
    paths = sysconfig.get_paths()
    env = base_env()
    env["PYTHONPATH"] = os.pathsep.join([str(package_copy), paths["purelib"], paths["platlib"]])  # the probe's
    daemon = start_daemon(env=env, python=("-S",))  # the probe's interpreter options: no `site`
    cwd = samples / "clusters" / "gpu-apt-01"
    proc, modules = loaded(["cmp", "generate"], cwd, {"ARGOCD_APP_SOURCE_PATH": "clusters/gpu-apt-01",
                                                       "COZY_RENDER_DAEMON_SOCKET": str(daemon.socket),
                                                       "PYTHONPATH": env["PYTHONPATH"]})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("apiVersion:")
    assert daemon.served() == 1, daemon.log_text()
    ours = {m for m in modules if m == "renderer" or m.startswith("renderer.")}
    assert ours <= CLIENT_MODULES, sorted(ours - CLIENT_MODULES)
    assert not modules & {"ruamel.yaml", "fastjsonschema", "json", "re", "pathlib", "typing", "socket", "enum",
                          "selectors", "click"}, sorted(modules)
