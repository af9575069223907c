from tests.kubefake import kube_fake, kube_fakes  # noqa: F401 - pytest fixtures for the diff tests
