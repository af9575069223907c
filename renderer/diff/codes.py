"""Codes the diff command prints besides the reference rules it checks against the live state
(PLT-09, PLT-11). Registered through ``renderer.codes.CODE_MODULES``."""

from __future__ import annotations

from renderer.codes import Code
from renderer.errors import ERROR, WARNING

CODES: list[Code] = [
    # A reference rule that only the live state decides, so it is diff's code, not an offline rule.
    Code("PLT-09", WARNING, "A Package no longer rendered stays installed (resource-policy keep)",
         "Every Package the platform renders carries `helm.sh/resource-policy: keep`, so dropping it from the "
         "render (adding it to `disabledPackages` later, flipping a flag) leaves the live Package, and its "
         "HelmReleases, in place; uninstalling means deleting the Package CR. Only a comparison can tell: "
         "`check` and `render` never report it; `cozy-render diff` does, for live Packages with this "
         "cluster's label that the render no longer has, and `diff --base` (the pull-request preview) does for a "
         "change that removes or renames a cluster, or stops its chart rendering a Package: it lists what the "
         "Application's deletion prunes (the platform Package among it) and the platform-made Packages that "
         "stay.",
         "C:packages/core/platform/templates/_helpers.tpl (keep annotation); "
         "W:operations/configuration/components.md"),
    Code("DIFF-LIVE", ERROR, "The API server could not be read",
         "Connection refused, TLS or DNS failure, 401/403 (the line names the kind and object), a 5xx "
         "after the bounded retries, or a truncated or malformed response. diff never reports \"no "
         "differences\" for a cluster it could not read completely.",
         "kubectl diff: exit >1 on any error (k8s.io/kubectl/pkg/cmd/diff/diff.go)"),
    Code("DIFF-TIMEOUT", ERROR, "The --timeout deadline passed before the live state was read",
         "One deadline covers every request to a cluster, retries included; raise --timeout for a slow "
         "or distant API server.",
         "kubectl --request-timeout; reference/validation-and-live-state.md section 3"),
    Code("DIFF-CLIENT", ERROR, "No usable cluster connection: kubeconfig, context or the live extra",
         "The kubeconfig (--kubeconfig, KUBECONFIG, ~/.kube/config, or the in-cluster service account) "
         "is missing or unreadable, the context does not exist (with --all: the context named like the "
         "cluster, or live.context), or the `kubernetes` client is not installed (the message names the "
         "command for this install: `pip install '<checkout>[live]'` from a source tree, else "
         "`pip install 'kubernetes>=37'`). --snapshot and --against need no client.",
         "design.md, Diff; kubeconfig contexts"),
    Code("DIFF-CONTEXT", ERROR, "The live cluster holds another cluster's objects: the wrong context",
         "Every object cozy-render renders carries `render.cozystack.io/cluster: <name>`. When the API server "
         "diff reached holds objects labelled for another cluster, the kubeconfig context points at the wrong "
         "cluster, and comparing would report everything as missing or orphaned. The line names both "
         "clusters and the context; pass --context or set live.context in the overlay.",
         "README, Diff (the context line); https://kubernetes.io/docs/reference/kubectl/generated/kubectl_config/kubectl_config_current-context/"),
    Code("DIFF-ORPHANS", WARNING, "Orphans of some kinds could not be searched",
         "diff lists every listable kind the API server serves for objects with the cluster's label. A kind "
         "the render does not have whose list fails (403 without cluster-wide list RBAC, an aggregated API "
         "that is down) is named here; the diff of the rendered objects is complete, but an orphan of that "
         "kind would not show. A failure on a rendered kind is DIFF-LIVE.",
         "README, Diff (orphans)"),
    Code("DIFF-SNAPSHOT", ERROR, "A --snapshot or --against file is not kubectl get output",
         "Each file must hold Kubernetes objects as `kubectl get -o yaml|json` writes them: single "
         "objects, Lists, or multi-document streams. A file that does not parse, a document that is not "
         "an object with apiVersion, kind and metadata.name (a truncated dump), or the same object twice "
         "is refused, with the file and line.",
         "kubectl get -o yaml|json output format"),
    Code("DIFF-IGNORE", ERROR, "An --ignore or diff.ignore entry is not a scoped JSON pointer",
         "Write a JSON pointer (/spec/replicas), optionally scoped: KIND:POINTER, KIND/NAME:POINTER or "
         "KIND/NAMESPACE/NAME:POINTER, where NAME may be *. `~1` stands for `/` and `~0` for `~` (RFC 6901).",
         "RFC 6901; flux diff ignore paths; Argo CD ignoreDifferences jsonPointers"),
    Code("DIFF-EXTERNAL", ERROR, "The KUBECTL_EXTERNAL_DIFF program failed",
         "The program named by KUBECTL_EXTERNAL_DIFF must exit 0 (no differences) or 1 (differences), "
         "as kubectl requires; anything else, or a program that cannot be started, is an error.",
         "kubectl diff: KUBECTL_EXTERNAL_DIFF (k8s.io/kubectl/pkg/cmd/diff/diff.go)"),
    Code("DIFF-USAGE", ERROR, "diff options that contradict each other",
         "--snapshot and --against are alternatives to a cluster; --server-side, --kubeconfig and --context "
         "need a cluster; --all picks each cluster's context itself. Exit code 2, as for any bad flag.",
         "cozy-render diff --help"),
]
