#!/usr/bin/env bash
# kube-build.sh — build Kubernetes' server binaries from the Go module proxy
# (no release download, no registry): kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet and kubectl at $KUBE_VERSION, into
# $RPCBED_KUBE_CACHE/$KUBE_VERSION/bin (default ~/.cache/rpcbed/kube, outside the
# repository so CI can keep it). A finished build is reused: the binaries are
# built once per version and machine.
#
# The module's zip holds no code under staging/, so each `replace k8s.io/X =>
# ./staging/...` becomes the published k8s.io/X at the matching v0 version; the
# k8s.io/sample-* lines go (only tests use them, and the proxy refuses
# sample-apiserver at this version), as do go.work and vendor/.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.30.14}
CACHE=${RPCBED_KUBE_CACHE:-$HOME/.cache/rpcbed/kube}
OUT=$CACHE/$KUBE_VERSION/bin
CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
GO=${GO:-go}

say() { echo "kube-build: $*" >&2; }

have_all() {
	local c
	for c in "${CMDS[@]}"; do [ -x "$OUT/$c" ] || return 1; done
	[ "$(cat "$OUT/.version" 2>/dev/null)" = "$KUBE_VERSION" ]
}
if have_all; then
	say "$KUBE_VERSION already built in $OUT"
	exit 0
fi

staging=v0.${KUBE_VERSION#v1.}
t0=$(date +%s)
say "downloading k8s.io/kubernetes@$KUBE_VERSION from the module proxy"
dir=$("$GO" mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -d "$dir" ] || { say "no module directory for k8s.io/kubernetes@$KUBE_VERSION"; exit 1; }

src=$CACHE/$KUBE_VERSION/src
rm -rf "$src"
mkdir -p "$CACHE/$KUBE_VERSION"
cp -r "$dir" "$src"
chmod -R u+w "$src"
rm -rf "$src/go.work" "$src/go.work.sum" "$src/vendor"
sed -i -E \
	-e '/k8s\.io\/sample-/d' \
	-e "s#^([[:space:]]*k8s\.io/[a-z0-9-]+) => \./staging/src/k8s\.io/[a-z0-9-]+\$#\1 => \1 $staging#" \
	"$src/go.mod"
if grep -q './staging/' "$src/go.mod"; then
	say "go.mod still points into staging/:"; grep './staging/' "$src/go.mod" >&2; exit 1
fi

say "building ${CMDS[*]} (a few minutes on 2 cores)"
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
mkdir -p "$OUT.tmp"
pkgs=()
for c in "${CMDS[@]}"; do pkgs+=("./cmd/$c"); done
(cd "$src" && GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 "$GO" build -trimpath -ldflags="$ldflags" -o "$OUT.tmp/" "${pkgs[@]}")
echo "$KUBE_VERSION" >"$OUT.tmp/.version"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
rm -rf "$src"
say "built $KUBE_VERSION in $(( $(date +%s) - t0 )) s: $OUT"
