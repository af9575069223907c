"""Credentials are never printed (issue 34 item 18): tokens trimmed as kubectl trims them, server URLs
printed without userinfo or query, known credential values masked in every message (a server's own
error body included), and a kubeconfig the client cannot use worded without the client's internals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from renderer.diff.live import shown_url
from tests.diff.helpers import cozy, overlays_repo, real_cluster, render_objects
from tests.kubefake import KubeFake

pytestmark = pytest.mark.loopback

CLUSTER = "gpu-apt-01"
TOKEN = "tok-SECRET-9f2a71"


def _kubeconfig(path: Path, server: str, user: dict) -> Path:
    doc = {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "c", "cluster": {"server": server}}],
           "users": [{"name": "u", "user": user}], "contexts": [{"name": CLUSTER, "context": {"cluster": "c",
                                                                                            "user": "u"}}],
           "current-context": CLUSTER}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture
def served(kube_fake: KubeFake, tmp_path: Path) -> tuple[KubeFake, Path]:
    cluster_dir = overlays_repo(tmp_path) / "clusters" / CLUSTER
    kube_fake.add(*real_cluster(render_objects(cluster_dir)))
    kube_fake.token = TOKEN
    return kube_fake, cluster_dir


def _exec_user(token: str) -> dict:
    credential = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                  "status": {"token": token}}
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": sys.executable,
                     "args": ["-c", f"print({json.dumps(json.dumps(credential))})"], "interactiveMode": "Never"}}


@pytest.mark.parametrize("user", [{"token": TOKEN + "\n"}, {"token": f"  {TOKEN}\r\n"}, "exec"],
                         ids=["block-scalar", "echoed", "exec-plugin"])
def test_a_token_ending_in_a_newline_is_trimmed_as_kubectl_does(served: tuple[KubeFake, Path], tmp_path: Path,
                                                                user: dict | str) -> None:
    fake, cluster_dir = served
    chosen = _exec_user(TOKEN + "\n") if user == "exec" else user
    assert isinstance(chosen, dict)
    result = cozy("diff", cluster_dir, "--kubeconfig", _kubeconfig(tmp_path / "kc", fake.url, chosen))
    assert result.code in (0, 1), result
    assert TOKEN not in result.stdout + result.stderr


def test_a_token_with_a_line_break_inside_is_refused_unprinted(served: tuple[KubeFake, Path], tmp_path: Path) -> None:
    fake, cluster_dir = served
    kc = _kubeconfig(tmp_path / "kc", fake.url, {"token": "tok-SECRET\nX-Injected: 1"})
    result = cozy("diff", cluster_dir, "--kubeconfig", kc)
    assert (result.code, result.stdout) == (3, "")
    assert result.stderr.count("\n") == 1 and "error[DIFF-CLIENT]:" in result.stderr
    assert "tok-SECRET" not in result.stderr and "Injected" not in result.stderr


def test_a_servers_error_body_quoting_the_token_is_masked(served: tuple[KubeFake, Path], tmp_path: Path) -> None:
    fake, cluster_dir = served
    fake.status_message = f"Unauthorized: header 'Authorization: Bearer {TOKEN}' rejected"
    fake.fail(r"^GET /api", 401)
    result = cozy("diff", cluster_dir, "--kubeconfig", _kubeconfig(tmp_path / "kc", fake.url, {"token": TOKEN}))
    assert (result.code, result.stdout) == (3, ""), result
    assert "401" in result.stderr and "***" in result.stderr and TOKEN not in result.stderr


def test_userinfo_and_query_of_a_server_url_are_never_printed(kube_fake: KubeFake, tmp_path: Path) -> None:
    cluster_dir = overlays_repo(tmp_path) / "clusters" / CLUSTER
    server = "http://admin:pw-SECRET-77@127.0.0.1:1/base?access_token=q-SECRET-88"
    result = cozy("diff", cluster_dir, "--kubeconfig", _kubeconfig(tmp_path / "kc", server, {}), "--timeout", "5")
    assert (result.code, result.stdout) == (3, ""), result
    assert "http://127.0.0.1:1/base" in result.stderr
    for secret in ("pw-SECRET-77", "q-SECRET-88", "admin", "access_token"):
        assert secret not in result.stderr


def test_an_oidc_user_the_client_cannot_use_is_one_worded_line(tmp_path: Path) -> None:
    cluster_dir = overlays_repo(tmp_path) / "clusters" / CLUSTER
    user = {"auth-provider": {"name": "oidc", "config": {"client-id": "k", "id-token": "abc.def.ghi",
                                                         "idp-issuer-url": "https://127.0.0.1:1",
                                                         "refresh-token": "r-SECRET-5"}}}
    result = cozy("diff", cluster_dir, "--kubeconfig", _kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user))
    assert (result.code, result.stdout) == (3, ""), result
    assert result.stderr.count("\n") == 1 and "error[DIFF-CLIENT]:" in result.stderr
    assert "codec" not in result.stderr and "r-SECRET-5" not in result.stderr and "credentials" in result.stderr


@pytest.mark.parametrize(("url", "shown"), [
    ("https://u:p@api.example.org:6443/k8s?access_token=x#f", "https://api.example.org:6443/k8s"),
    ("https://[::1]:6443", "https://[::1]:6443"),
    ("http://127.0.0.1", "http://127.0.0.1"),
])
def test_shown_url(url: str, shown: str) -> None:
    assert shown_url(url) == shown
