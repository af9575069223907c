"""The doctor fake answers pod logs, events and the extra kinds as the API server does, checked with
the real ``kubernetes`` client (CoreV1Api, the same calls doctor makes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from tests.doctor import fake_state as fs
from tests.doctor.fake_state import NS, DoctorFake

pytestmark = pytest.mark.loopback  # the API fake listens on 127.0.0.1


@pytest.fixture
def core(doctor_fake: DoctorFake, tmp_path: Path) -> client.CoreV1Api:
    doctor_fake.load(fs.host_driver_passthrough())
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(doctor_fake.kubeconfig(tmp_path / "kc")),
                            client_configuration=configuration, persist_config=False)
    return client.CoreV1Api(client.ApiClient(configuration))


def test_logs_are_plain_text_with_tail_lines(core: client.CoreV1Api) -> None:
    text = core.read_namespaced_pod_log("nvidia-vfio-manager-8xk2p", NS, container="k8s-driver-manager",
                                        previous=True, tail_lines=1)
    assert text == "Labeling node gpu-node-1 with nvidia.com/gpu.deploy.driver=pre-installed\n"


@pytest.mark.parametrize(("container", "previous", "message"), [
    (None, False, "a container name must be specified for pod nvidia-vfio-manager-8xk2p"),
    ("nope", False, "container nope is not valid for pod nvidia-vfio-manager-8xk2p"),
    ("nvidia-vfio-manager", True, 'previous terminated container "nvidia-vfio-manager" in pod '
                                  '"nvidia-vfio-manager-8xk2p" not found'),
    ("nvidia-vfio-manager", False, 'container "nvidia-vfio-manager" in pod "nvidia-vfio-manager-8xk2p" is waiting '
                                   "to start: PodInitializing"),
])
def test_log_errors_are_400s(core: client.CoreV1Api, container: str | None, previous: bool, message: str) -> None:
    options = {"container": container} if container else {}
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_pod_log("nvidia-vfio-manager-8xk2p", NS, previous=previous, **options)
    assert caught.value.status == 400 and message in json.loads(caught.value.body)["message"]


def test_built_in_lists_omit_kind_and_api_version(core: client.CoreV1Api, doctor_fake: DoctorFake) -> None:
    stuck = fs.runtime_not_registered().find("Pod", "nvidia-device-plugin-daemonset-cqj9w")
    doctor_fake.add(fs.event(stuck, "FailedCreatePodSandBox", fs.NO_RUNTIME_MESSAGE))
    events = core.list_namespaced_event(NS, _preload_content=False)
    body = json.loads(events.data)
    assert body["kind"] == "EventList" and "kind" not in body["items"][0]
    assert body["items"][0]["involvedObject"]["name"] == "nvidia-device-plugin-daemonset-cqj9w"
    nodes = core.list_node()
    assert [n.metadata.name for n in nodes.items] == ["gpu-node-1"]
