"""The configuration files of the local node's components (pure: paths and ports in, text out).

Every path a component writes to lies under the node's data directory, every address it listens
on is 127.0.0.1 (or the node's bridge), and nothing points at a registry outside this machine:
the runtime's pause image and every image the tests run come from the local registry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

NODE_NAME = "cvo-py-node"
# The Deployments in install/ reach the API server at 127.0.0.1:6443, as on a control-plane node.
API_PORT = 6443
# Pods live on this bridge, in network namespaces the runtime makes; they get no default route, so
# nothing they send can leave the machine: only the bridge's subnet and the Service range are routed.
# The bridge's own address is the node's IP.
BRIDGE = "cvopy0"
POD_SUBNET = "10.88.0.0/24"
GATEWAY = "10.88.0.1"
SERVICE_SUBNET = "10.96.0.0/24"  # the API server harness's --service-cluster-ip-range
# The kubelet's cgroup root (in every hierarchy): every Pod, container and conmon lives below it.
CGROUP_ROOT = "cvo-py-node"
CNI_PLUGIN_DIR = "/usr/lib/cni"  # Debian's containernetworking-plugins
# runc of the version CRI-O itself depends on: Debian's crun 1.8 refuses the OCI runtime-spec
# version CRI-O 1.34 writes ("container create failed: unknown version specified").
RUNTIME = "runc"
CONMON = "/usr/bin/conmon"
# The runtime's pause image, in the local registry (nodecluster.push_pause).
PAUSE_IMAGE = "pause:3.10"
# Images under this repository name need a signature (sigstore, our key) on this node.
SIGNED_REPOSITORY = "cvo-py-signed"


@dataclass(frozen=True)
class NodePaths:
    """Where everything of one node lives: `root` is `<cluster data dir>/node`."""

    root: Path

    @property
    def apiserver(self) -> Path:
        return self.root / "apiserver"

    @property
    def kubeconfig(self) -> Path:
        return self.apiserver / "kubeconfig"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def pids(self) -> Path:
        return self.root / "pids.json"

    @property
    def kubelet(self) -> Path:
        return self.root / "kubelet"

    @property
    def kubelet_config(self) -> Path:
        return self.root / "kubelet.yaml"

    @property
    def pod_logs(self) -> Path:
        return self.root / "pod-logs"

    @property
    def resolv_conf(self) -> Path:
        return self.root / "resolv.conf"

    @property
    def proxy_config(self) -> Path:
        return self.root / "kube-proxy.yaml"

    @property
    def crio(self) -> Path:
        return self.root / "crio"

    @property
    def crio_config(self) -> Path:
        return self.crio / "crio.conf"

    @property
    def crio_socket(self) -> Path:
        return self.crio / "crio.sock"

    @property
    def policy(self) -> Path:
        return self.crio / "policy.json"

    @property
    def registries_conf(self) -> Path:
        return self.crio / "registries.conf"

    @property
    def signing_key(self) -> Path:
        """The public key the signature policy trusts for SIGNED_REPOSITORY (nothing is signed with it)."""
        return self.crio / "signing-key.pub"

    @property
    def cni_config_dir(self) -> Path:
        return self.root / "cni" / "net.d"

    @property
    def cni_ipam(self) -> Path:
        return self.root / "cni" / "ipam"

    @property
    def registry(self) -> Path:
        return self.root / "registry"

    @property
    def registry_config(self) -> Path:
        return self.registry / "config.yml"

    @property
    def payloads(self) -> Path:
        """What the node's /etc/cvo/updatepayloads is (a link to it)."""
        return self.root / "updatepayloads"

    @property
    def prometheus(self) -> Path:
        return self.root / "prometheus"


def registry_config(paths: NodePaths, port: int) -> str:
    """docker-registry (distribution) on 127.0.0.1, storing under the node's directory."""
    return yaml.safe_dump(
        {
            "version": 0.1,
            "log": {"level": "warn", "accesslog": {"disabled": True}},
            "storage": {"filesystem": {"rootdirectory": str(paths.registry / "storage")}, "delete": {"enabled": True}},
            "http": {"addr": f"127.0.0.1:{port}"},
        },
        sort_keys=False,
    )


def crio_config(paths: NodePaths, pause_image: str, pinns: Path, runtime: Path) -> str:
    """crio.conf: cgroupfs under the kubelet's cgroup root, storage and sockets under the node's directory."""
    crio = paths.crio

    def q(value: str | Path) -> str:
        return json.dumps(str(value))

    return "\n".join(
        [
            "[crio]",
            f"root = {q(crio / 'storage')}",
            f"runroot = {q(crio / 'run')}",
            'storage_driver = "overlay"',
            f"log_dir = {q(crio / 'logs')}",
            f"version_file = {q(crio / 'run' / 'version')}",
            f"version_file_persist = {q(crio / 'version')}",
            f"clean_shutdown_file = {q(crio / 'clean.shutdown')}",
            "",
            "[crio.api]",
            f"listen = {q(paths.crio_socket)}",
            'stream_address = "127.0.0.1"',
            'stream_port = "0"',
            "",
            "[crio.runtime]",
            f"default_runtime = {q(RUNTIME)}",
            'cgroup_manager = "cgroupfs"',
            'conmon_cgroup = "pod"',
            f"conmon = {q(CONMON)}",
            f"namespaces_dir = {q(crio / 'ns')}",
            f"pinns_path = {q(pinns)}",
            f"container_exits_dir = {q(crio / 'exits')}",
            f"container_attach_socket_dir = {q(crio / 'attach')}",
            f"decryption_keys_path = {q(crio / 'keys')}",
            "hooks_dir = []",
            'apparmor_profile = ""',
            "drop_infra_ctr = true",
            "enable_criu_support = false",
            "",
            f"[crio.runtime.runtimes.{RUNTIME}]",
            f"runtime_path = {q(runtime)}",
            f"runtime_root = {q(crio / 'runtime')}",
            'monitor_cgroup = "pod"',
            "",
            "[crio.image]",
            f"pause_image = {q(pause_image)}",
            f"signature_policy = {q(paths.policy)}",
            f"signature_policy_dir = {q(crio / 'policies')}",
            f"big_files_temporary_dir = {q(crio / 'tmp')}",
            "",
            "[crio.network]",
            f"network_dir = {q(paths.cni_config_dir)}",
            f"plugin_dirs = [{q(CNI_PLUGIN_DIR)}]",
            "",
            "[crio.metrics]",
            "enable_metrics = false",
            "",
            "[crio.nri]",
            "enable_nri = false",
            "",
        ]
    )


def registries_conf(registry: str) -> str:
    """containers-registries.conf(5): the local registry speaks plain HTTP; no search registries,
    so a short name never resolves to a registry elsewhere."""
    return f'unqualified-search-registries = []\n\n[[registry]]\nlocation = "{registry}"\ninsecure = true\n'


def signature_policy(registry: str, key: Path) -> str:
    """containers-policy.json(5): anything from the local registry is accepted, except the
    SIGNED_REPOSITORY, which needs a sigstore signature by `key` (as OpenShift's policy does for
    its release repository); every other registry is refused outright."""
    return json.dumps(
        {
            "default": [{"type": "reject"}],
            "transports": {
                "docker": {
                    registry: [{"type": "insecureAcceptAnything"}],
                    f"{registry}/{SIGNED_REPOSITORY}": [
                        {"type": "sigstoreSigned", "keyPath": str(key), "signedIdentity": {"type": "matchRepository"}}
                    ],
                },
                "containers-storage": {"": [{"type": "insecureAcceptAnything"}]},
            },
        },
        indent=2,
    )


def cni_config(paths: NodePaths) -> str:
    """A bridge with host-local addresses; routes only to the Pod subnet and the Service range."""
    return json.dumps(
        {
            "cniVersion": "1.0.0",
            "name": "cvo-py",
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": BRIDGE,
                    "isGateway": True,
                    "isDefaultGateway": False,
                    "ipMasq": False,
                    "hairpinMode": True,
                    "ipam": {
                        "type": "host-local",
                        "dataDir": str(paths.cni_ipam),
                        "ranges": [[{"subnet": POD_SUBNET, "gateway": GATEWAY}]],
                        "routes": [{"dst": SERVICE_SUBNET, "gw": GATEWAY}],
                    },
                }
            ],
        },
        indent=2,
    )


def kubelet_config(paths: NodePaths, client_ca: str, port: int, healthz_port: int) -> str:
    """KubeletConfiguration for this machine: cgroupfs with cgroup v1 controllers, no swap check,
    eviction thresholds that a shared disk does not trip, everything on 127.0.0.1."""
    config = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        # The node's address is the bridge's (a kubelet refuses a loopback node IP): the API server
        # reaches the kubelet there, and host-network Pods have it as their Pod IP.
        "address": GATEWAY,
        "port": port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": healthz_port,
        "authentication": {
            # The API server reaches the kubelet (logs, exec) without a client certificate; the
            # kubelet listens on the bridge only, which nothing outside this machine reaches.
            "anonymous": {"enabled": True},
            "webhook": {"enabled": False},
            "x509": {"clientCAFile": client_ca},
        },
        "authorization": {"mode": "AlwaysAllow"},
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": f"/{CGROUP_ROOT}",
        "cgroupsPerQOS": True,
        "failCgroupV1": False,
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{paths.crio_socket}",
        "podLogsDir": str(paths.pod_logs),
        "resolvConf": str(paths.resolv_conf),
        "staticPodPath": "",
        "enforceNodeAllocatable": ["pods"],
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "1%",
            "nodefs.inodesFree": "1%",
            "imagefs.available": "1%",
        },
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "protectKernelDefaults": False,
        "localStorageCapacityIsolation": True,
        "nodeStatusReportFrequency": "10s",
        "shutdownGracePeriod": "0s",
        "containerLogMaxSize": "10Mi",
    }
    return yaml.safe_dump(config, sort_keys=False)


def kube_proxy_config(kubeconfig: Path, healthz_port: int, metrics_port: int) -> str:
    """KubeProxyConfiguration: nftables mode, conntrack left as the host has it."""
    config = {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "nftables",
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "hostnameOverride": NODE_NAME,
        "bindAddress": "127.0.0.1",
        "healthzBindAddress": f"127.0.0.1:{healthz_port}",
        "metricsBindAddress": f"127.0.0.1:{metrics_port}",
        "clusterCIDR": POD_SUBNET,
        "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
    }
    return yaml.safe_dump(config, sort_keys=False)


def kubernetes_endpointslice() -> dict[str, object]:
    """The `kubernetes` Service's endpoint for Pods: the bridge's address, where a forwarder to the
    API server listens (the API server itself listens on 127.0.0.1, which a Pod cannot reach)."""
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "kubernetes-node-bridge",
            "namespace": "default",
            "labels": {
                "kubernetes.io/service-name": "kubernetes",
                "endpointslice.kubernetes.io/managed-by": "cvo-py-localnode",
            },
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": [GATEWAY], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "port": API_PORT, "protocol": "TCP"}],
    }
