#!/usr/bin/env bash
# reproduce-lan.sh RPCBED OUT [FLAGS...] — go-grpc-thrift-aerospike with its
# network back (`make reproduce-lan`, reproduce-lan.yaml). Run it inside
# `docker/netbed.sh run`, which makes the two hosts (network namespaces "server"
# and "clients", a Docker engine each, a veth between them) and removes them on
# every exit path. As published, Aerospike sits beside the client: this script
# starts ../shared/aerospike's asd inside the clients' namespace with its service
# on 198.18.0.2:3000 (the shared start.sh and configuration, only the address
# changed), runs the reproduction across reproduce-lan.yaml's link, and stops asd
# and removes its files on every exit path.
set -euo pipefail

RPCBED=${1:?usage: reproduce-lan.sh RPCBED OUT [FLAGS...]}
OUT=${2:?usage: reproduce-lan.sh RPCBED OUT [FLAGS...]}
shift 2
NS=${RPCBED_NETBED:-rpcbed}-clients
ADDR=198.18.0.2
SHARED=${RPCBED_SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared}
[[ -x $SHARED/aerospike/bin/asd ]] || { echo "reproduce-lan: no Aerospike at $SHARED/aerospike (RPCBED_SHARED)" >&2; exit 2; }
ip netns list | grep -qw "$NS" || { echo "reproduce-lan: no namespace $NS: run under docker/netbed.sh run" >&2; exit 2; }

pkg=$(mktemp -d /tmp/rpcbed-aerospike-pkg.XXXXXX)
as_dir=$(mktemp -d /tmp/rpcbed-aerospike-lan.XXXXXX)
cleanup() {
	ip netns exec "$NS" "$pkg/stop.sh" "$as_dir" >/dev/null 2>&1 || true
	rm -rf "$pkg" "$as_dir"
}
trap cleanup EXIT

# The shared package with its addresses moved to the clients' side of the link.
ln -s "$SHARED/aerospike/bin" "$pkg/bin"
mkdir "$pkg/etc"
sed "s/127\.0\.0\.1/$ADDR/" "$SHARED/aerospike/etc/aerospike.conf.template" >"$pkg/etc/aerospike.conf.template"
sed "s/^AS_HOST=127\.0\.0\.1\$/AS_HOST=$ADDR/" "$SHARED/aerospike/start.sh" >"$pkg/start.sh"
grep -q "^AS_HOST=$ADDR\$" "$pkg/start.sh" || { echo "reproduce-lan: start.sh sets no AS_HOST=127.0.0.1 to move" >&2; exit 2; }
cp "$SHARED/aerospike/stop.sh" "$pkg/stop.sh"
chmod +x "$pkg/start.sh" "$pkg/stop.sh"

pid=$(ip netns exec "$NS" "$pkg/start.sh" "$as_dir" | tail -n 1)
echo "reproduce-lan: Aerospike (pid $pid) on $ADDR:3000 in namespace $NS" >&2
"$RPCBED" reproduce -spec reproduce-lan.yaml -aerospike-hosts "$ADDR:3000" -out "$OUT" "$@" go-grpc-thrift-aerospike
