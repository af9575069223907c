"""node-config prints only the warnings node files depend on (issue 23, item 7): a cluster without VLANs
gets no unrelated render warning (PLT-11 on gpu-apt-01), only a count pointing at check."""

from __future__ import annotations

import pytest

from tests.conftest import REPO


def test_unrelated_warnings_are_counted_not_printed(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    _, _, check_err = cli("check", "overlays/clusters/gpu-apt-01")
    assert "warning[PLT-11]" in check_err  # the render does have a warning
    code, out, err = cli("node-config", "overlays/clusters/gpu-apt-01")
    assert (code, out) == (0, "")
    assert "PLT-11" not in err
    assert "1 other warning(s) about the render: cozy-render check overlays/clusters/gpu-apt-01" in err
    assert "no vlans:" in err


def test_vlan_warnings_are_still_printed(cli, repo) -> None:
    import json

    from tests.conftest import overlay_doc

    doc = overlay_doc(vlans=[{"name": "vlan100", "id": 100, "uplink": "eno2", "bridge": "br100",
                              "namespaces": ["tenant-a"], "ipam": {"type": "static"}}])
    root = repo({"clusters/c1/cluster.yaml": json.dumps(doc)})
    _, _, check_err = cli("check", str(root / "clusters" / "c1"))
    vlan_warnings = [line for line in check_err.splitlines() if "warning[NET-" in line]
    assert vlan_warnings, check_err  # NET-05: a NAD ipam the guest would fight
    code, _, err = cli("node-config", str(root / "clusters" / "c1"))
    assert code == 0
    assert all(line in err for line in vlan_warnings)
