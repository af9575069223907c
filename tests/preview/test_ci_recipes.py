"""The CI recipes in docs/ci/ run: their scripts, taken from the YAML as they are, on a repository
with two commits, with cozy-render on PATH and a local stand-in for the GitHub / GitLab comment API
(127.0.0.1 only). Running a recipe twice leaves one comment, updated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import REPO
from tests.preview.conftest import SECRET_VALUES, git, without_helm

DOCS = REPO / "docs" / "ci"
MARKER = "<!-- cozy-render-diff -->"


class FakeAPI:
    """Comments of one pull request (GitHub) or merge request (GitLab), over HTTP on 127.0.0.1."""

    def __init__(self) -> None:
        self.comments: list[dict[str, Any]] = [{"id": 7, "body": "LGTM"}]  # someone else's
        self.calls: list[tuple[str, str]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, data: Any, code: int = 200) -> None:
                raw = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _body(self) -> dict[str, Any]:
                return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

            def _authorised(self) -> bool:
                token = self.headers.get("Authorization") or self.headers.get("PRIVATE-TOKEN")
                if token not in ("Bearer gh-token", "gl-token"):
                    self._reply({"message": "401"}, 401)
                    return False
                return True

            def do_GET(self) -> None:
                api.calls.append(("GET", self.path))
                if self._authorised():
                    self._reply(api.comments if "page=1" in self.path else [])

            def do_POST(self) -> None:
                api.calls.append(("POST", self.path))
                if self._authorised():
                    comment = {"id": 100 + len(api.comments), "body": self._body()["body"]}
                    api.comments.append(comment)
                    self._reply(comment, 201)

            def _update(self) -> None:
                api.calls.append((self.command, self.path))
                if self._authorised():
                    wanted = int(self.path.rsplit("/", 1)[1])
                    for comment in api.comments:
                        if comment["id"] == wanted:
                            comment["body"] = self._body()["body"]
                            self._reply(comment)
                            return
                    self._reply({"message": "404"}, 404)

            do_PATCH = do_PUT = _update

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """As the runners do: bash, stop at the first failing command."""
    path = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", os.environ.get("PATH", ""))])
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=cwd,
                          env={**os.environ, **env, "PATH": path}, capture_output=True, text=True, timeout=300,
                          check=False)


def github_steps() -> dict[str, str]:
    workflow = YAML(typ="safe").load((DOCS / "github-actions.yaml").read_text())
    return {s.get("id") or s.get("name") or s.get("uses"): s.get("run", "") for s in workflow["jobs"]["diff"]["steps"]}


@pytest.mark.loopback
def test_github_actions_workflow_posts_then_updates_one_comment(fleet_repo: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    steps = github_steps()
    assert "actions/checkout@v4" in steps and "Fail on new error findings" in steps
    output = tmp_path / "github_output"
    env = {"BASE_SHA": git(fleet_repo, "rev-parse", "base").strip(),
           "HEAD_SHA": git(fleet_repo, "rev-parse", "change").strip(), "OVERLAYS": "overlays/",
           "GITHUB_OUTPUT": str(output), "GITHUB_TOKEN": "gh-token", "PR_NUMBER": "12",
           "GITHUB_REPOSITORY": "platform/fleet"}
    with FakeAPI() as api:
        env["GITHUB_API_URL"] = api.url
        diff = bash(steps["diff"], fleet_repo, env)
        assert diff.returncode == 0, diff.stderr
        assert output.read_text() == "status=1\n"  # GPU-05 is new: the last step fails the check
        comment = (fleet_repo / "cozy-render-diff.md").read_text()
        assert comment.startswith(MARKER) and "talos-gpu" in comment
        report = (fleet_repo / "cozy-render-diff.txt").read_text()
        assert "error[GPU-05]" in report and "\x1b[" not in report
        assert not any(v in comment + report for v in SECRET_VALUES)
        post = steps["Post or update the pull request comment"]
        for _ in range(2):
            done = bash(post, fleet_repo, env)
            assert done.returncode == 0, done.stderr
        ours = [c for c in api.comments if c["body"].startswith(MARKER)]
        assert len(ours) == 1 and ours[0]["body"] == comment
        assert [m for m, _ in api.calls] == ["GET", "POST", "GET", "PATCH"]
        assert api.calls[1][1] == "/repos/platform/fleet/issues/12/comments"
        assert api.calls[3][1] == f"/repos/platform/fleet/issues/comments/{ours[0]['id']}"
    assert bash(steps["Fail on new error findings"], fleet_repo, env).returncode == 1


@pytest.mark.loopback
def test_github_workflow_on_a_change_without_new_errors_passes(fleet_repo: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    output = tmp_path / "github_output"
    env = {"BASE_SHA": git(fleet_repo, "rev-parse", "change").strip(),
           "HEAD_SHA": git(fleet_repo, "rev-parse", "base").strip(), "OVERLAYS": "overlays/",
           "GITHUB_OUTPUT": str(output)}
    done = bash(github_steps()["diff"], fleet_repo, env)
    assert done.returncode == 0 and output.read_text() == "status=0\n", done.stderr


@pytest.mark.loopback
def test_gitlab_job_posts_then_updates_one_note(fleet_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    job = YAML(typ="safe").load((DOCS / "gitlab-ci.yaml").read_text())["cozy-render-diff"]
    assert job["variables"]["GIT_DEPTH"] == "0"
    script = "\n".join(job["script"])
    env = {**job["variables"], "CI_MERGE_REQUEST_DIFF_BASE_SHA": git(fleet_repo, "rev-parse", "base").strip(),
           "CI_COMMIT_SHA": git(fleet_repo, "rev-parse", "change").strip(), "CI_PROJECT_ID": "42",
           "CI_MERGE_REQUEST_IID": "5", "COZY_RENDER_NOTE_TOKEN": "gl-token"}
    with FakeAPI() as api:
        env["CI_API_V4_URL"] = api.url + "/api/v4"
        for _ in range(2):
            done = bash(script, fleet_repo, env)
            assert done.returncode == 1, done.stderr  # the change adds GPU-05: the job fails, after posting
        ours = [c for c in api.comments if c["body"].startswith(MARKER)]
        assert len(ours) == 1 and ours[0]["body"] == (fleet_repo / "cozy-render-diff.md").read_text()
        assert [m for m, _ in api.calls] == ["GET", "POST", "GET", "PUT"]
        assert api.calls[1][1] == "/api/v4/projects/42/merge_requests/5/notes"
    assert set(job["artifacts"]["paths"]) == {"cozy-render-diff.txt", "cozy-render-diff.md"}


def readme_pre_push_hook() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index("#!/bin/sh\n# .git/hooks/pre-push")
    return text[start:text.index("```", start)]


def test_the_readme_pre_push_hook_refuses_new_errors_only(fleet_repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    without_helm(monkeypatch)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(fleet_repo), str(clone)], check=True, capture_output=True)
    hook = clone / ".git" / "hooks" / "pre-push"
    hook.write_text(readme_pre_push_hook())
    hook.chmod(0o755)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    cluster = clone / "overlays" / "clusters" / "apt-a" / "cluster.yaml"
    cluster.write_text(cluster.read_text() + "host: {nvidiaDriver: false}\n")
    assert bash("git commit -qam harmless && .git/hooks/pre-push", clone, env).returncode == 0
    cluster.write_text(cluster.read_text() + "gpu: {variant: vgpu}\n")  # GPU-11: no vGPU Manager image
    done = bash("git commit -qam vgpu && .git/hooks/pre-push", clone, env)
    assert done.returncode == 1 and "error[GPU-11]" in done.stdout, done.stdout + done.stderr
