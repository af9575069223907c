"""The layer schema in a real editor back-end: yaml-language-server over LSP (stdio) flags
``platform.variant: isp-ful`` and completes the vendored variants (issue 23 acceptance).

yaml-language-server is a Node program, not a Python dependency: the test runs it when it is on PATH
(``npm install -g yaml-language-server``) or named by ``YAML_LANGUAGE_SERVER``, and skips saying so
otherwise; ``tests/load/test_schema_agrees.py`` checks the same schema with a stock Draft 7 validator.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from renderer.load.overlay_schema import LAYER_SCHEMA_FILE

SERVER = os.environ.get("YAML_LANGUAGE_SERVER") or shutil.which("yaml-language-server")


class Client:
    def __init__(self, command: str) -> None:
        self.proc = subprocess.Popen([command, "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.buffer = b""

    def send(self, method: str, params: Any, request: bool = True) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        ident = None
        if request:
            self.next_id += 1
            ident = message["id"] = self.next_id
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return ident

    def receive(self, want: Any, timeout: float = 30.0) -> dict[str, Any]:
        """The first message ``want(message)`` accepts; answers the server's own requests with null."""
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while time.monotonic() < deadline:
            while b"\r\n\r\n" in self.buffer:
                head, _, rest = self.buffer.partition(b"\r\n\r\n")
                length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
                             .split(b":")[1])
                if len(rest) < length:
                    break
                message, self.buffer = json.loads(rest[:length]), rest[length:]
                if "method" in message and "id" in message:  # workspace/configuration and the like
                    result = [{}] * len(message.get("params", {}).get("items", [])) \
                        if message["method"] == "workspace/configuration" else None
                    body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                    self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)  # type: ignore[union-attr]
                    self.proc.stdin.flush()  # type: ignore[union-attr]
                    continue
                if want(message):
                    return message
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                self.buffer += chunk
        pytest.fail("yaml-language-server did not answer in time")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


@pytest.mark.skipif(SERVER is None, reason="yaml-language-server is not on PATH (npm install -g "
                                           "yaml-language-server, or set YAML_LANGUAGE_SERVER)")
def test_yaml_language_server_flags_and_completes_the_variant(tmp_path: Path) -> None:
    assert SERVER is not None
    document = tmp_path / "cluster.yaml"
    text = (f"# yaml-language-server: $schema={LAYER_SCHEMA_FILE.as_uri()}\n"
            "apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nplatform:\n  variant: isp-ful\n")
    document.write_text(text, encoding="utf-8")
    uri = document.as_uri()
    client = Client(SERVER)
    try:
        first = client.send("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(), "capabilities": {
            "textDocument": {"completion": {"completionItem": {"snippetSupport": False}}}}})
        client.receive(lambda m: m.get("id") == first)
        client.send("initialized", {}, request=False)
        client.send("workspace/didChangeConfiguration", {"settings": {"yaml": {
            "validate": True, "completion": True, "schemaStore": {"enable": False}}}}, request=False)
        client.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1,
                                                              "text": text}}, request=False)
        published = client.receive(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                   and m["params"]["uri"] == uri and m["params"]["diagnostics"])
        lines = [(d["range"]["start"]["line"], d["message"]) for d in published["params"]["diagnostics"]]
        assert any(line == 4 and "isp-full" in message for line, message in lines), lines

        asked = client.send("textDocument/completion", {"textDocument": {"uri": uri},
                                                         "position": {"line": 4, "character": len("  variant: ")}})
        answer = client.receive(lambda m: m.get("id") == asked)["result"]
        labels = {item["label"] for item in (answer["items"] if isinstance(answer, dict) else answer)}
        assert {"default", "isp-full", "isp-full-generic", "isp-hosted"} <= labels, labels
    finally:
        client.close()
