"""``cozy-render --version``: the release (a ``vX.Y.Z`` tag, CHANGELOG.md) and the platform chart
versions vendored in it, which decide what ``platform.version`` may name and what the rules check."""

from __future__ import annotations

from renderer import __version__
from renderer.platform_chart import CHARTS, DEFAULT_VERSION, shipped_versions


def version_text() -> str:
    import json

    vendored = json.loads((CHARTS / "vendored.json").read_text(encoding="utf-8"))
    lines = [f"cozy-render {__version__}", "platform charts (platform.version):"]
    for version in shipped_versions():
        source = vendored.get(version, {})
        commit = str(source.get("commit", ""))[:12]
        default = " (default)" if version == DEFAULT_VERSION else ""
        lines.append(f"  {version}{default}  cozystack/cozystack {source.get('ref', '?')} @ {commit}")
    return "\n".join(lines) + "\n"
