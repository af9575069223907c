"""The findings ``cozy-render doctor`` reports: one code per documented failure of a GPU route, each
explained with the documented fix. Registered through ``renderer.codes.CODE_MODULES``.

Sources (read at the commits the domain reference names): W: = cozystack/website
``content/en/docs/next/``, C: = cozystack/cozystack; NVIDIA gpu-operator v26.3.1 (``cmd/nvidia-validator``,
``assets/state-*``), NVIDIA/k8s-driver-manager v0.10.0 (``cmd/driver-manager/main.go``),
NVIDIA/vgpu-device-manager. Cannot-read failures are diff's codes (DIFF-LIVE, DIFF-TIMEOUT, DIFF-CLIENT).
"""

from __future__ import annotations

from renderer.codes import Code
from renderer.errors import ERROR, WARNING

HOST_DRIVER_FIX = (
    "Either use the `container` variant (gpu.variant: container) if the workloads can be containers: it keeps "
    "the host driver. Or clean the host: list what is installed with "
    "`dpkg-query -W -f '${Package}\\n' 'nvidia-*' 'libnvidia-*' 'cuda-*'`, review it (keep NVIDIA DOCA / "
    "Mellanox OFED `libnvidia-*` on an RDMA host; an empty list means a `.run` install: run `sudo "
    "nvidia-uninstall`), `sudo apt purge` the reviewed list (never `apt autoremove`). The page warns that the "
    "`nvidia-dkms-*` and `nvidia-kernel-*` packages are the load-bearing ones: they build and load the kernel "
    "module, so a purge that leaves them keeps the driver bound; make sure the reviewed list holds them. "
    "Blacklist `nouveau nvidia "
    "nvidia_drm nvidia_modeset nvidia_uvm nvidia_peermem` in /etc/modprobe.d/blacklist-nvidia.conf, run "
    "`sudo update-initramfs -u -k all` and reboot. Confirm: `lsmod | grep -E '^(nvidia|nouveau)'` and "
    "`dkms status | grep -i nvidia` print nothing and `command -v nvidia-smi` finds nothing; delete the stuck "
    "`nvidia-vfio-manager-*` and `nvidia-sandbox-validator-*` pods; finally `kubectl label node <NODE> "
    "nvidia.com/gpu.deploy.driver-` (nothing resets that label).")

RUNTIME_FIX = (
    "On the node: `sudo nvidia-ctk runtime configure --runtime=containerd`, `sudo systemctl restart containerd`, "
    "and `grep nvidia /etc/containerd/config.toml` must show the runtime entry (`apt install "
    "nvidia-container-toolkit` lays down binaries only; the nvidia runtime must be the default or reachable "
    "through the `nvidia` RuntimeClass).")

CODES: list[Code] = [
    Code("DOC-PACKAGE", ERROR, "A Package of the GPU route is absent or not Ready on the cluster",
         "The route's Packages (cozystack.gpu-operator, and cozystack.hami when rendered) must exist and carry "
         "Ready=True. Absent: the render is not synced yet (or, on the bundle route, the platform Package has not "
         "rendered it). Ready=False with reason DependenciesNotReady names no cause itself: doctor follows "
         "status.dependencies down to the first Package that is absent or not Ready for another reason "
         "(PackageSourceNotFound, VariantNotFound, HelmReleaseFailed, ...) and names it; fix that one first "
         "(`kubectl get packages`, `kubectl describe package <name>`, and its HelmReleases with "
         "`kubectl get hr -A -l cozystack.io/package=<name>`).",
         "reference (a) Package status and reconcile steps 2-4 (C:internal/controller/package_reconciler.go)"),
    Code("DOC-OPERATOR", ERROR, "The gpu-operator is not installed, not reconciled, or not running",
         "Every GPU route runs the NVIDIA operator as Deployment `gpu-operator` in cozy-gpu-operator, which creates "
         "the ClusterPolicy's operands (the DaemonSets, the `nvidia` RuntimeClass). Neither the Deployment nor a "
         "ClusterPolicy on the cluster while Package cozystack.gpu-operator is Ready means its release was never "
         "installed or reconciled: `kubectl get hr -n cozy-gpu-operator`, `kubectl describe hr -n "
         "cozy-gpu-operator gpu-operator`, `kubectl get packages cozystack.gpu-operator`. A Deployment with fewer "
         "ready replicas than wanted: `kubectl -n cozy-gpu-operator describe deploy gpu-operator` and "
         "`kubectl -n cozy-gpu-operator logs deploy/gpu-operator`. Until the operator runs, doctor reports no "
         "operand, runtime or allocatable finding (they would all be its victims).",
         "W:operations/gpu-container-workloads.md section 2; reference (c) PackageSource facts"),
    Code("DOC-DAEMONSET", ERROR, "An operand DaemonSet the route needs is absent, scheduled nowhere, or not ready",
         "The documentation lists the pods each route runs in cozy-gpu-operator. container and Talos native: "
         "`gpu-feature-discovery`, `nvidia-dcgm-exporter`, `nvidia-device-plugin-daemonset`, "
         "`nvidia-operator-validator` (and the one-shot `nvidia-cuda-validator`); passthrough: "
         "`nvidia-vfio-manager`, `nvidia-sandbox-device-plugin-daemonset`, `nvidia-sandbox-validator`; vgpu: "
         "`nvidia-vgpu-manager-daemonset`, the sandbox device plugin and validator (and "
         "`nvidia-vgpu-device-manager` when enabled). A DaemonSet that is absent was deleted or is disabled in the "
         "ClusterPolicy (`kubectl get clusterpolicies -o yaml`); one with desired 0 while GPU nodes exist selects "
         "no node (`kubectl -n cozy-gpu-operator get ds <name> -o jsonpath='{.spec.template.spec.nodeSelector}'` "
         "against `kubectl get node <NODE> --show-labels`: the operator's nvidia.com/gpu.deploy.* labels and "
         "nvidia.com/gpu.workload.config); one with fewer ready than desired and no failing pod has no pod on the "
         "nodes named (`kubectl -n cozy-gpu-operator describe ds <name>`).",
         "W:operations/gpu-container-workloads.md section 2; W:operations/troubleshooting/gpu-operator-host-driver.md; "
         "W:virtualization/vgpu.md"),
    Code("DOC-CLUSTERPOLICY", ERROR, "The gpu-operator's ClusterPolicy is absent or not ready",
         "The operator reconciles one ClusterPolicy (`nvidia.com/v1`, rendered by the Package's release) and sets "
         "`status.state` to `ready` once every operand it enabled runs. doctor reports it only when no other "
         "finding explains it (an operand that fails is named by its own code): `kubectl get clusterpolicies -o "
         "jsonpath='{.items[*].status.state}'`, then `kubectl -n cozy-gpu-operator logs deploy/gpu-operator` for "
         "the operand it waits on.",
         "gpu-operator v26.3.1 api/nvidia/v1 ClusterPolicy status; W:operations/gpu-container-workloads.md section 2"),
    Code("DOC-SHAPE", ERROR, "A live object has fields of the wrong type",
         "doctor checks the type of every field it reads (labels, statuses, restart counts, allocatable, Package "
         "conditions and dependencies, Event references) where it reads it. A field of another type than "
         "Kubernetes gives it (a list for labels, a string for a count) is named here, per object, and read as "
         "absent, so the object is never taken for a healthy one. An API server does not send such objects: "
         "check what answers at the kubeconfig's server (`kubectl get <kind> <name> -o json`), e.g. a proxy or "
         "an aggregated API in between.",
         "Kubernetes API reference (core/v1 Pod, Node, Event; apps/v1 DaemonSet, Deployment)"),
    Code("DOC-POD", ERROR, "A gpu-operator pod is not Running (or Completed)",
         "The documented health check is that every pod in cozy-gpu-operator reaches Running (validators: "
         "Completed): `kubectl get pods --namespace cozy-gpu-operator`. A pod named here matched no more specific "
         "signature; read it with `kubectl -n cozy-gpu-operator describe pod <pod>` and "
         "`kubectl -n cozy-gpu-operator logs <pod> -c <container> --previous`. A pod in Init:0/N is usually a "
         "victim: walk up to the first stage that crashloops or keeps failing its validation.",
         "W:operations/gpu-container-workloads.md section 2, Verify the operator is healthy"),
    Code("DOC-HOST-DRIVER", ERROR, "Passthrough on a node with a pre-installed NVIDIA host driver",
         "The `default` (passthrough) variant needs the GPU owned by vfio-pci and nothing else. On a node with the "
         "apt-installed driver, the `k8s-driver-manager` init container of `nvidia-vfio-manager-*` runs "
         "`chroot /host nvidia-smi --query-gpu=driver_version --format=csv,noheader`, logs `Host driver "
         "detected: <version>`, labels the node `nvidia.com/gpu.deploy.driver=pre-installed` and exits non-zero "
         "(Init:Error / Init:CrashLoopBackOff); `nvidia-sandbox-validator-*` then fails with `device not bound to "
         "'vfio-pci'` and the node registers no nvidia.com/ resource. " + HOST_DRIVER_FIX,
         "W:operations/troubleshooting/gpu-operator-host-driver.md; reference (c) apt host details"),
    Code("DOC-VFIO-UNBOUND", ERROR, "nvidia-sandbox-validator: a GPU is not bound to vfio-pci",
         "`nvidia-sandbox-validator` fails `error validating vfio-pci driver installation: device not bound to "
         "'vfio-pci'` while no host driver was detected on the node (e.g. right after the host was cleaned, or "
         "the vfio_pci module is missing). Check `lspci -nnk -d 10de:` (`Kernel driver in use: vfio-pci` "
         "expected), that the vfio_pci and vfio_iommu_type1 modules load and IOMMU is on, then delete the stuck "
         "pods to skip the CrashLoopBackOff backoff: `kubectl -n cozy-gpu-operator get pods -o name | grep -E "
         "'^pod/(nvidia-vfio-manager|nvidia-sandbox-validator)-' | xargs -r kubectl -n cozy-gpu-operator delete`.",
         "W:operations/troubleshooting/gpu-operator-host-driver.md, Confirm the host is clean"),
    Code("DOC-DRIVER-LABEL", WARNING, "A node keeps nvidia.com/gpu.deploy.driver=pre-installed",
         "k8s-driver-manager sets `nvidia.com/gpu.deploy.driver=pre-installed` when it detects a host driver, and "
         "nothing on the success path resets it (`rescheduleGPUOperatorComponents` restores only the operand "
         "labels). It misleads later debugging and disables the containerized-driver DaemonSet if the node later "
         "switches to a container workload. Clear it: `kubectl label node <NODE> nvidia.com/gpu.deploy.driver-`.",
         "W:operations/troubleshooting/gpu-operator-host-driver.md, Clear the leftover label"),
    Code("DOC-NO-DEVICES", ERROR, "A GPU node advertises no nvidia.com/ resource for VMs",
         "On the passthrough and vgpu routes the sandbox device plugin registers one resource per GPU model "
         "(`nvidia.com/<PCI-ID name>`, e.g. nvidia.com/TU104GL_TESLA_T4). None allocatable means nothing was "
         "bound or created: check `kubectl get node <NODE> -o json | jq '.status.allocatable | "
         "with_entries(select(.key | startswith(\"nvidia.com/\")))'`, the vfio-manager and sandbox pods of the "
         "node, and for SR-IOV vGPU (Ada Lovelace/Blackwell) the per-VF profile: "
         "`echo <id> > /sys/bus/pci/devices/<VF>/nvidia/current_vgpu_type` (ids from creatable_vgpu_types), which "
         "is lost on every reboot.",
         "W:operations/troubleshooting/gpu-operator-host-driver.md; W:virtualization/vgpu.md"),
    Code("DOC-WORKLOAD-LABEL", ERROR, "A node carries nvidia.com/gpu.workload.config other than container",
         "The container variant relies on the upstream default `container` workload for unlabelled nodes; a "
         "leftover `nvidia.com/gpu.workload.config=vm-passthrough` (or vm-vgpu) from the passthrough setup "
         "overrides it per node and the device plugin will not serve the GPU. Remove it: "
         "`kubectl label node <NODE> nvidia.com/gpu.workload.config-`.",
         "W:operations/gpu-container-workloads.md, Prerequisites; reference rule GPU-09"),
    Code("DOC-RUNTIMECLASS", ERROR, "No nvidia RuntimeClass on a pod GPU route",
         "The operator's pods run with `runtimeClassName: nvidia` (chart `operator.runtimeClass: nvidia`) and the "
         "operator creates that RuntimeClass when it reconciles its ClusterPolicy; without it the operand pods "
         "cannot be created. First, the operator is installed and has reconciled: `kubectl -n cozy-gpu-operator "
         "get deploy gpu-operator`, `kubectl get clusterpolicies` (status.state ready) and the operator's log "
         "(`kubectl -n cozy-gpu-operator logs deploy/gpu-operator`); doctor reports an operator that is not "
         "installed as DOC-OPERATOR instead. Then `kubectl get runtimeclass nvidia`. Only once the RuntimeClass "
         "exists does the containerd side matter (DOC-RUNTIME): the handler must exist on every GPU node: "
         + RUNTIME_FIX,
         "W:operations/gpu-container-workloads.md Prerequisites; C:docs/gpu-vgpu.md; gpu-operator values "
         "operator.runtimeClass"),
    Code("DOC-RUNTIME", ERROR, "containerd on a GPU node has no nvidia runtime",
         "Pods with runtimeClassName nvidia fail to start on the node with `no runtime for \"nvidia\" is "
         "configured` (event FailedCreatePodSandBox), or the node's `status.runtimeHandlers` (Kubernetes 1.30 and "
         "later: `kubectl get node <NODE> -o jsonpath='{.status.runtimeHandlers[*].name}'`) lists no `nvidia`: "
         "nvidia-container-toolkit is installed but not registered "
         "with containerd, which the container variant requires (its own toolkit DaemonSet is off so it never "
         "overwrites the host's /etc/containerd/config.toml). " + RUNTIME_FIX,
         "W:operations/gpu-container-workloads.md, Prerequisites; reference rule GPU-10"),
    Code("DOC-VALIDATOR", ERROR, "nvidia-operator-validator (or its CUDA validation) has not passed on a node",
         "The validator walks driver-validation, toolkit-validation, cuda-validation and plugin-validation, "
         "one init container each, and its main container prints `all validations are successful`. The stuck "
         "stage is named with its last log line: driver-validation retries `command failed, retrying after 5 "
         "seconds` until `nvidia-smi` works on the host (check `nvidia-smi` over SSH or `kubectl debug "
         "node/<NODE>`); toolkit-validation runs nvidia-smi inside a container, so it fails while the runtime is "
         "not wired (" + RUNTIME_FIX + "); cuda-validation runs the `nvidia-cuda-validator` vectorAdd pod; "
         "plugin-validation gives up with `GPU resources are not discovered by the node` when the device plugin "
         "registers no nvidia.com/gpu (see DOC-WORKLOAD-LABEL).",
         "gpu-operator v26.3.1 cmd/nvidia-validator; W:operations/gpu-container-workloads.md section 2"),
    Code("DOC-NO-GPU", ERROR, "A GPU node advertises no allocatable nvidia.com/gpu",
         "On the container and Talos native routes the device plugin registers `nvidia.com/gpu`; the documented "
         "check is `kubectl describe node <NODE>` showing nvidia.com/gpu under Capacity and Allocatable. 0 or "
         "absent on a node labelled nvidia.com/gpu.present=true: read the node's nvidia-device-plugin-daemonset "
         "and nvidia-operator-validator pods (DOC-VALIDATOR), and its nvidia.com/gpu.workload.config label. Reported "
         "only when nothing else explains it: a node whose cause doctor found (a label, the runtime, a validator "
         "stage, a missing DaemonSet) gets that one finding, which says the node advertises no nvidia.com/gpu.",
         "W:operations/gpu-container-workloads.md section 2"),
    Code("DOC-HAMI-STACKED", ERROR, "cozystack.hami runs on top of a pod GPU route",
         "The container variant pins the NVIDIA device plugin on and HAMi ships its own, so both register "
         "nvidia.com/gpu; the cozystack.hami PackageSource's dependsOn only orders the install, it does not turn "
         "the operator's plugin off. Not a supported combination on the management cluster: delete the "
         "cozystack.hami Package (`kubectl delete package cozystack.hami`; removing it from the render leaves it "
         "installed, resource-policy keep). For fractional sharing use HAMi in tenant Kubernetes clusters.",
         "W:operations/gpu-container-workloads.md, Fractional GPU sharing; reference rule HAMI-01"),
    Code("DOC-OPERANDS", ERROR, "Operands the route pins off run on the cluster",
         "The container variant does not spawn nvidia-driver-daemonset, nvidia-container-toolkit-daemonset or "
         "nvidia-vfio-manager (all pinned off); the toolkit DaemonSet would overwrite the host's "
         "/etc/containerd/config.toml. Seeing them means the live cozystack.gpu-operator is another variant "
         "(`kubectl get package cozystack.gpu-operator -o jsonpath='{.spec.variant}'`): run "
         "`cozy-render diff` and sync the render.",
         "W:operations/gpu-container-workloads.md section 2; reference (c) values-container.yaml"),
    Code("DOC-VGPU-DEVICE-MANAGER", ERROR, "vgpu-device-manager crashloops: no parent devices found",
         "NVIDIA's vgpu-device-manager walks /sys/class/mdev_bus and fails with `no parent devices found` when it "
         "lists no GPU. The fix depends on the GPU generation, which doctor takes from the overlay's "
         "`host.gpuModel` (as rule GPU-13 does). SR-IOV vGPU (Ada Lovelace, Blackwell: L4, L40, L40S, B100) has no "
         "mdev bus at all: keep the device manager off (gpu.vgpuDeviceManager.enabled: false, the default), list "
         "the VFs in gpu.permittedHostDevices.pciHostDevices and assign the profile per VF "
         "(`echo <id> > /sys/bus/pci/devices/<VF>/nvidia/current_vgpu_type`, again after every reboot). mdev vGPU "
         "(Pascal to Ampere: V100, T4, A100, A30, A40, A10) needs the device manager, and the mdev bus appears "
         "only once the vGPU Manager driver is loaded on the host: check the node's "
         "`nvidia-vgpu-manager-daemonset` pod, then `ls /sys/class/mdev_bus` on the node, and that the vGPU type "
         "in gpu.mediatedDevicesConfiguration is one the GPU supports. Without host.gpuModel both are named.",
         "W:virtualization/vgpu.md; C:packages/system/gpu-operator/values.yaml; reference rule GPU-13"),
    Code("DOC-VGPU-IMAGE", ERROR, "The vGPU Manager image cannot be pulled",
         "The vGPU Manager image is not public: you build it from NVIDIA gpu-driver-container "
         "`vgpu-manager/<os>/` with the Linux KVM .run of your vGPU release, push it to a private registry and set "
         "gpu.vgpuManager.repository, image and version to it. The pod named here is in ErrImagePull or "
         "ImagePullBackOff; its message says whether the reference is wrong (not found) or access is denied "
         "(see DOC-PULL-SECRET).",
         "W:virtualization/vgpu.md; reference (c) vGPU specifics; reference rule GPU-11"),
    Code("DOC-PULL-SECRET", ERROR, "The vGPU Manager pull secret is missing in cozy-gpu-operator",
         "gpu.vgpuManager.imagePullSecrets names docker-registry Secrets that must exist in cozy-gpu-operator, "
         "where the vGPU Manager DaemonSet runs (kubelet: `Unable to retrieve some image pull secrets`). Create "
         "it: `kubectl -n cozy-gpu-operator create secret docker-registry <name> --docker-server=<registry> "
         "--docker-username=<user> --docker-password=<token>`.",
         "W:virtualization/vgpu.md; reference (c) vGPU specifics"),
    Code("DOC-TALOS-COMPAT", ERROR, "The nvidia-driver-compat DaemonSet is not ready on a GPU node",
         "On Talos the NVIDIA system extension puts the driver under a non-standard prefix; the "
         "nvidia-driver-compat DaemonSet (nodeSelector nvidia.com/gpu.present=true, privileged) copies "
         "/usr/local/glibc/usr/lib/libnvidia-ml.so.1 and /usr/local/bin/nvidia-smi into /var/nvidia-driver (the "
         "operator's hostPaths.driverInstallDir) and writes the validation marker. Check that the node's image "
         "carries the NVIDIA Talos system extension (the Cozystack installer profile ships none), then the "
         "pod: `kubectl -n cozy-gpu-operator logs ds/nvidia-driver-compat`. Workaround for NVIDIA/gpu-operator#1687.",
         "C:packages/system/gpu-operator/examples/values-native-talos.yaml and README.md; reference rule GPU-07"),
    Code("DOC-TALOS-MARKER", ERROR, "Talos: the driver validation marker was never written",
         "nvidia-driver-compat touches /run/nvidia/validations/.driver-ctr-ready once the driver files are in "
         "/var/nvidia-driver; until then the validator's driver-validation init container retries forever "
         "(`command failed, retrying after 5 seconds`; Init:0/N, no restarts) and every operand waits behind it. "
         "Make the compat pod on the node succeed (DOC-TALOS-COMPAT): the extension's files must exist at "
         "/usr/local/glibc/usr/lib/libnvidia-ml.so.1 and /usr/local/bin/nvidia-smi on the host.",
         "C:packages/system/gpu-operator/examples/nvidia-driver-compat.yaml; gpu-operator cmd/nvidia-validator"),
    Code("DOC-VERIFY", ERROR, "The GPU verification Job failed",
         "The opt-in verification Job (gpu.verify: true) runs the documentation's sample CUDA pod: one "
         "nvidia.com/gpu, `nvidia-smi`, whose output should enumerate the GPUs and the host's driver version. It "
         "failed: its log and events are quoted. Re-run it after the fix by syncing again (Argo CD recreates the "
         "hook; Flux: delete the Job, the Kustomization re-applies it).",
         "W:operations/gpu-container-workloads.md section 3, Run a sample CUDA pod"),
    Code("DOC-VERIFY-PENDING", WARNING, "The GPU verification Job has not completed",
         "The Job is absent (not synced yet, or deleted), still running, or its pod cannot be scheduled "
         "(`Insufficient nvidia.com/gpu`: no node advertises a free GPU, see DOC-NO-GPU). Argo CD reports the "
         "Application's sync as running until the PostSync hook ends; with Flux, `wait: true` on the "
         "Kustomization holds it not Ready until the Job completes.",
         "W:operations/gpu-container-workloads.md section 3; Argo CD resource hooks; Flux Kustomization wait"),
]
