#!/usr/bin/env bash
# build-ext.sh builds the official gRPC PHP extension (grpc.so) and keeps the official
# Grpc\ PHP library, both from Debian's grpc source package, so they match the
# system libgrpc. Output: php-client/ext/build/ (gitignored):
#   grpc.so                     the extension (load with -d extension=.../grpc.so)
#   grpc/src/php/lib/Grpc/      the Grpc\ library
#   grpc/etc/roots.pem          read by Grpc\BaseStub as ../../../../etc/roots.pem
#   VERSION                     the grpc source version it was built from
# A no-op (well under a second) when VERSION matches the installed libgrpc-dev.
# Needs root only the first time, to add a deb-src entry and install build deps.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$here/ext/build
pkgs=(dpkg-dev php-dev libgrpc-dev gcc libc6-dev make)

log() { echo "build-ext: $*" >&2; }

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	log "installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

version=$(dpkg-query -W -f='${source:Version}' libgrpc-dev)
phpapi=$(php-config --phpapi)
stamp="grpc=$version phpapi=$phpapi"
if [[ -f $out/grpc.so && -f $out/grpc/src/php/lib/Grpc/BaseStub.php && "$(cat "$out/VERSION" 2>/dev/null)" == "$stamp" ]]; then
	exit 0
fi

# deb-src: mirror the system's own Debian "deb" entries, so no host name lives here.
if ! apt-cache showsrc grpc 2>/dev/null | grep -q '^Package: grpc'; then
	src=/etc/apt/sources.list.d/rpcbed-deb-src.sources
	if [[ ! -f $src ]]; then
		tmp=$(mktemp)
		for f in /etc/apt/sources.list.d/*.sources; do
			[[ -f $f && $f != "$src" ]] || continue
			grep -q 'debian-archive-keyring' "$f" || continue
			sed -e 's/^Types:.*$/Types: deb-src/' "$f" >>"$tmp"
			echo >>"$tmp"
		done
		if [[ -s $tmp ]]; then
			log "adding deb-src entries in $src"
			install -m 0644 "$tmp" "$src"
		else
			# one-line format (older images): Debian's own archive lines only.
			cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
				grep -E '^deb .*debian' | sed -e 's/^deb /deb-src /' >"$tmp" || true
			[[ -s $tmp ]] || { rm -f "$tmp"; log "no Debian deb entry in /etc/apt to mirror as deb-src"; exit 1; }
			log "adding deb-src entries in ${src%.sources}.list"
			install -m 0644 "$tmp" "${src%.sources}.list"
		fi
		rm -f "$tmp"
	fi
	apt-get update -qq
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log "fetching grpc $version source"
(cd "$work" && apt-get source -qq "grpc=$version" >/dev/null 2>&1) || (cd "$work" && apt-get source -qq grpc >/dev/null)
tree=$(find "$work" -maxdepth 1 -mindepth 1 -type d -name 'grpc-*' | head -1)
[[ -n $tree && -d $tree/src/php/ext/grpc ]] || { log "grpc source tree not found"; exit 1; }

log "building grpc.so (phpize + configure + make)"
ext=$work/ext
cp -r "$tree/src/php/ext/grpc" "$ext"
(
	cd "$ext"
	phpize >/dev/null 2>&1
	GRPC_LIB_SUBDIR=lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH) ./configure --enable-grpc >/dev/null
	make -s -j"$(nproc)" >/dev/null 2>&1 || make -j1
)

mkdir -p "$(dirname "$out")"
rm -rf "$out.new"
mkdir -p "$out.new/grpc/src/php/lib" "$out.new/grpc/etc"
cp "$ext/modules/grpc.so" "$out.new/grpc.so"
cp -r "$tree/src/php/lib/Grpc" "$out.new/grpc/src/php/lib/Grpc"
cp "$tree/etc/roots.pem" "$out.new/grpc/etc/roots.pem"
echo "$stamp" >"$out.new/VERSION"
rm -rf "$out"
mv "$out.new" "$out"
php -n -d extension="$out/grpc.so" -r 'exit(extension_loaded("grpc") ? 0 : 1);' || { log "grpc.so does not load"; exit 1; }
log "built $out/grpc.so ($stamp)"
