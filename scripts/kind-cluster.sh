#!/usr/bin/env bash
# A kind cluster that can run dbabench with executor: pods, for users with Docker and internet:
# csi-driver-host-path (a CSI driver with snapshots) and the external-snapshotter's CRDs and
# controller, a default StorageClass and VolumeSnapshotClass on it, the dbabench image loaded.
# The tests do not use it (they build their control plane from Go modules, see tests/cluster).
#
#   scripts/kind-cluster.sh [IMAGE]          # default dbabench:0.1.0
set -euo pipefail
IMAGE=${1:-dbabench:0.1.0}
NAME=${KIND_CLUSTER:-dbabench}
SNAPSHOTTER=v8.4.0        # the same release whose CRDs the cluster tests install
HOSTPATH=v1.17.0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

kind create cluster --name "$NAME"
kind load docker-image "$IMAGE" --name "$NAME"

base=https://raw.githubusercontent.com/kubernetes-csi/external-snapshotter/$SNAPSHOTTER
for crd in volumesnapshotclasses volumesnapshotcontents volumesnapshots; do
  kubectl apply -f "$base/client/config/crd/snapshot.storage.k8s.io_$crd.yaml"
done
kubectl apply -f "$base/deploy/kubernetes/snapshot-controller/rbac-snapshot-controller.yaml"
kubectl apply -f "$base/deploy/kubernetes/snapshot-controller/setup-snapshot-controller.yaml"

git clone --depth 1 --branch "$HOSTPATH" https://github.com/kubernetes-csi/csi-driver-host-path "$work/hostpath"
"$work/hostpath/deploy/kubernetes-latest/deploy.sh"
kubectl apply -f "$work/hostpath/examples/csi-storageclass.yaml"
kubectl patch storageclass csi-hostpath-sc \
  -p '{"metadata":{"annotations":{"storageclass.kubernetes.io/is-default-class":"true"}}}'
kubectl patch storageclass standard \
  -p '{"metadata":{"annotations":{"storageclass.kubernetes.io/is-default-class":"false"}}}'
kubectl apply -f "$work/hostpath/examples/csi-snapshotclass-v1.yaml"
kubectl annotate volumesnapshotclass csi-hostpath-snapclass \
  snapshot.storage.kubernetes.io/is-default-class=true --overwrite
echo "kind cluster $NAME ready: StorageClass csi-hostpath-sc, VolumeSnapshotClass csi-hostpath-snapclass"
