"""Seeded fuzzing of diff's live inputs (issue 25 item 8): snapshot files and API list responses.
Whatever they hold, the answer is objects or one located DIFF-SNAPSHOT / DIFF-LIVE refusal, never
another exception (which would be exit 4)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from renderer.diff.live import load_snapshot
from renderer.errors import RenderError

FUZZ = settings(derandomize=True, max_examples=200, deadline=None, database=None,
                phases=[Phase.explicit, Phase.generate, Phase.shrink],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

TOKENS = st.sampled_from([
    "apiVersion: v1\n", "kind: ConfigMap\n", "kind: List\n", "items:\n", "- ", "metadata:\n", "  name: m\n",
    "  namespace: [a]\n", "  name: 7\n", "metadata: {name: m}\n", "&a ", "*a", "[", "]", "{", "}", ",", ": ",
    "---\n", "\n", "  ", "9" * 5000, "1e400", ".nan", "!!python/object:x ", "!!binary ", "\x00", "\ud800", "'", '"',
    '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}}', "[" * 50, "]" * 50, "null", "~",
])
TEXT = st.lists(TOKENS, max_size=40).map("".join)


@FUZZ
@given(text=TEXT, suffix=st.sampled_from([".yaml", ".json"]))
def test_a_snapshot_gives_objects_or_a_located_refusal(tmp_path_factory: pytest.TempPathFactory, text: str,
                                                       suffix: str) -> None:
    path = tmp_path_factory.mktemp("snap") / f"live{suffix}"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        index = load_snapshot(path)
    except RenderError as exc:
        assert [f.code for f in exc.findings] == ["DIFF-SNAPSHOT"]
        assert exc.findings[0].location is not None
        return
    for obj in index.values():
        assert isinstance(obj["metadata"]["name"], str)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                          max_size=3), max_leaves=12)
ITEM = st.fixed_dictionaries({"metadata": st.one_of(JSON_VALUES, st.fixed_dictionaries(
    {"name": st.one_of(st.text(max_size=4), JSON_VALUES)}, optional={"namespace": JSON_VALUES}))})
LIST = st.fixed_dictionaries({}, optional={"items": st.one_of(st.lists(ITEM, max_size=4), JSON_VALUES),
                                           "metadata": st.one_of(JSON_VALUES, st.fixed_dictionaries(
                                               {"continue": JSON_VALUES}))})


@pytest.mark.loopback
@FUZZ
@given(body=LIST)
def test_a_list_response_gives_items_or_a_refusal(kube_fake, tmp_path_factory: pytest.TempPathFactory,
                                                  body: dict) -> None:
    """The fake answers the Package list with the fuzzed body; the client validates it."""
    from renderer.diff.live import ClusterSource, Deadline, Resource

    kc = kube_fake.kubeconfig(tmp_path_factory.mktemp("kc") / "kc", ["fuzz"])
    kube_fake.faults.clear()
    kube_fake.canned = {"/apis/cozystack.io/v1alpha1/packages": json.dumps(body).encode()}
    source = ClusterSource(str(kc), "fuzz", Deadline(10))
    resource = Resource("cozystack.io/v1alpha1", "Package", "packages", False, frozenset({"list"}))
    try:
        items = source._list(resource, None)
    except RenderError as exc:
        assert [f.code for f in exc.findings] == ["DIFF-LIVE"], exc.findings
        return
    finally:
        source.close()
    assert all(isinstance(i["metadata"]["name"], str) and i["metadata"]["name"] for i in items)
    assert len({(i["metadata"].get("namespace") or "", i["metadata"]["name"]) for i in items}) == len(items)


