#!/usr/bin/env bash
# images.sh — build the rpcbed runtime images; an image whose inputs did not change
# is never rebuilt.
#
#   docker/images.sh [all|base|go|php|java]...   (default: all)
#   docker/images.sh tags                         print the image:tag of each built image
#
# Every image is tagged rpcbed/NAME:<hash of its inputs> and rpcbed/NAME:latest.
# Inputs are the Dockerfile, every file copied in, the build arguments and the base.
#
# Base image: RPCBED_BASE names it (e.g. debian:bookworm-slim where a registry is
# reachable). Unset, the base is made here from Debian's packages: debootstrap
# --variant=minbase from the Debian mirror the host's apt already uses, then
# `docker import` as rpcbed/base:<hash of its package list>. It is built once; its
# .deb files stay in $RPCBED_CACHE so a rebuild does not download them again.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DOCKER_DIR=$ROOT/docker
STAGE=$DOCKER_DIR/.build
CACHE=${RPCBED_CACHE:-/var/cache/rpcbed}
SUITE=bookworm
GO=${GO:-go}
export DOCKER_BUILDKIT=0 # the legacy builder: Debian's engine has no buildx here

say() { echo "images: $*" >&2; }
die() { say "$*"; exit 1; }

# hash_inputs FILE|DIR|-STRING...  prints a 12-hex-digit hash of names and contents.
hash_inputs() {
	local a
	for a in "$@"; do
		if [ "${a#-}" != "$a" ]; then
			printf 'arg %s\n' "${a#-}"
		elif [ -d "$a" ]; then
			(cd "$a" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum)
		else
			printf 'file %s ' "$(basename "$a")"
			sha256sum <"$a"
		fi
	done | sha256sum | cut -c1-12
}

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# ---- base ---------------------------------------------------------------------

# The Debian stanzas (deb822) of the host's apt sources, for the suite we build:
# debootstrap takes its mirror from the first one, and the image gets them all so
# `apt-get install` in a Dockerfile uses the same archive the host uses.
debian_sources() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk -v suite="$SUITE" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && suites ~ ("(^| )" suite "(-updates|-security)?( |$)") && uris != "")
					printf "Types: deb\nURIs: %s\nSuites: %s\nComponents: %s\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n", uris, suites, comps
				types = suites = uris = comps = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			{ key = $1; sub(/:$/, "", key); $1 = ""; sub(/^ +/, "") }
			key == "Types" { types = $0 }
			key == "Suites" { suites = $0 }
			key == "URIs" { uris = $0 }
			key == "Components" { comps = $0 }
			END { flush() }
		' "$f"
	done
}

debian_mirror() {
	debian_sources | awk -v suite="$SUITE" '
		/^URIs:/ { uri = $2 }
		/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) { print uri; exit } }'
}

# Only what every runtime image needs beyond minbase; the images add their own.
BASE_PACKAGES="ca-certificates"

base_tag() { echo "rpcbed/base:$(hash_inputs "-$SUITE" "-minbase" "-$BASE_PACKAGES" "$DOCKER_DIR/base")"; }

build_base() {
	if [ -n "${RPCBED_BASE:-}" ]; then
		BASE=$RPCBED_BASE
		have_image "$BASE" || say "base $BASE is not local; docker build will pull it"
		return
	fi
	BASE=$(base_tag)
	if have_image "$BASE"; then
		say "$BASE is current"
		return
	fi
	[ "$(id -u)" = 0 ] || die "building the base with debootstrap needs root (or set RPCBED_BASE=debian:bookworm-slim where a registry is reachable)"
	command -v debootstrap >/dev/null || {
		say "installing debootstrap"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y --no-install-recommends debootstrap >/dev/null ||
			{ apt-get update -qq && apt-get install -y --no-install-recommends debootstrap >/dev/null; } ||
			die "apt-get install debootstrap failed"
	}
	local mirror
	mirror=$(debian_mirror)
	[ -n "$mirror" ] || die "no Debian $SUITE mirror found in /etc/apt/sources.list.d/*.sources"
	local t0=$SECONDS rootfs
	mkdir -p "$CACHE/debootstrap"
	rootfs=$(mktemp -d "$CACHE/rootfs.XXXXXX")
	trap 'rm -rf "$rootfs"' EXIT
	say "debootstrap --variant=minbase $SUITE (cache $CACHE/debootstrap)"
	debootstrap --variant=minbase --include="${BASE_PACKAGES// /,}" \
		--cache-dir="$CACHE/debootstrap" "$SUITE" "$rootfs" "$mirror" >"$CACHE/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
	# Make the rootfs behave like debian:bookworm-slim: the host's Debian sources,
	# no recommends, no docs or man pages, no caches in the layer.
	rm -f "$rootfs/etc/apt/sources.list"
	debian_sources >"$rootfs/etc/apt/sources.list.d/debian.sources"
	cp "$DOCKER_DIR/base/apt.conf" "$rootfs/etc/apt/apt.conf.d/90rpcbed"
	cp "$DOCKER_DIR/base/nodoc.cfg" "$rootfs/etc/dpkg/dpkg.cfg.d/90rpcbed-nodoc"
	rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log \
		"$rootfs"/usr/share/doc/*/changelog* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*
	say "docker import -> $BASE"
	tar -C "$rootfs" --numeric-owner -c . |
		docker import --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' - "$BASE" >/dev/null
	docker tag "$BASE" rpcbed/base:latest
	rm -rf "$rootfs"
	trap - EXIT
	say "$BASE built in $((SECONDS - t0)) s"
}

# ---- runtime images -----------------------------------------------------------

# build_image NAME CONTEXT [--build-arg K=V]...
build_image() {
	local name=$1 ctx=$2
	shift 2
	local df=$DOCKER_DIR/$name/Dockerfile tag a args=()
	for a in "$@"; do args+=("-$a"); done
	tag="rpcbed/$name:$(hash_inputs "$df" "$ctx" "-BASE=$BASE" "-$BASE_ID" ${args[@]+"${args[@]}"})"
	if have_image "$tag"; then
		docker tag "$tag" "rpcbed/$name:latest"
		say "$tag is current"
		return
	fi
	local t0=$SECONDS
	say "docker build $tag"
	# Host network: RUN apt-get reaches the mirror as the host does (no bridge).
	local log=$STAGE/$name.build.log
	docker build --network host --build-arg "BASE=$BASE" "$@" \
		--label "org.rpcbed.inputs=${tag#*:}" -t "$tag" -t "rpcbed/$name:latest" \
		-f "$df" "$ctx" >"$log" 2>&1 ||
		{ tail -n 30 "$log" >&2; die "docker build $tag failed (log: $log)"; }
	say "$tag built in $((SECONDS - t0)) s ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"
	prune "$name" "${tag#*:}"
}

# prune NAME KEEP: untag the older builds of rpcbed/NAME, so images do not pile up
# with every change. An image a container still uses stays (rmi refuses it).
prune() {
	local old
	for old in $(docker images "rpcbed/$1" --format '{{.Tag}}'); do
		case $old in latest | "$2") continue ;; esac
		docker rmi "rpcbed/$1:$old" >/dev/null 2>&1 || true
	done
}

fresh_stage() { rm -rf "${STAGE:?}/$1" && mkdir -p "$STAGE/$1"; }

image_go() {
	[ -f "$ROOT/go-server/main.go" ] || { say "skip rpcbed/go: go-server/ is not there yet"; MISSING+=" go"; return; }
	local ctx=$STAGE/go pkgs=./go-server
	# Not wiped between runs: go build leaves an up-to-date binary alone instead of
	# linking it again, which is most of a warm run's time.
	mkdir -p "$ctx"
	if [ -f "$ROOT/go-client/main.go" ]; then pkgs+=" ./go-client"; else
		say "rpcbed/go without go-client: go-client/ is not there yet"
		rm -f "$ctx/go-client"
	fi
	# Static, path-free, VCS-free: the same sources give the same bytes, so the
	# image hash changes only when the binaries do.
	(cd "$ROOT" && CGO_ENABLED=0 $GO build -trimpath -buildvcs=false -o "$ctx/" $pkgs) ||
		die "go build failed"
	build_image go "$ctx"
}

image_php() {
	local src=$ROOT/php-client ctx=$STAGE/php so=$ROOT/php-client/ext/build/grpc.so
	[ -f "$src/bin/client.php" ] || { say "skip rpcbed/php: php-client/bin/client.php is not there yet"; MISSING+=" php"; return; }
	[ -f "$so" ] || { say "skip rpcbed/php: $so is not built (php-client/build-ext.sh)"; MISSING+=" php"; return; }
	[ -f "${so%/*}/protobuf.so" ] || { say "skip rpcbed/php: ${so%/*}/protobuf.so is not built (php-client/build-ext.sh)"; MISSING+=" php"; return; }
	[ -f "${so%/*}/ice.so" ] || { say "skip rpcbed/php: ${so%/*}/ice.so is not built (php-client/build-ext.sh)"; MISSING+=" php"; return; }
	fresh_stage php
	mkdir -p "$ctx/php-client"
	# The client, its generated code and build-ext.sh's output (grpc.so, the Grpc\
	# library, roots.pem, protobuf.so, ice.so) in the layout the client expects; not
	# its tests or tooling, nor php-conf.d (links into the host's /etc/php). protobuf.so
	# links libc only; ice.so's libraries come with php-zeroc-ice (libzeroc-ice3.7).
	(cd "$src" && tar -c --exclude=./tests --exclude=./ext --exclude=ext/build/php-conf.d --exclude='./*.mk' --exclude=./build-ext.sh \
		--exclude='./phpunit.xml*' --exclude=./.phpunit.cache . ext/build) | tar -C "$ctx/php-client" -x
	[ -x "$ctx/php-client/bin/php-client" ] || cp "$DOCKER_DIR/php/php-client.sh" "$ctx/php-client/bin/php-client"
	build_image php "$ctx" --build-arg "GRPC_RUNTIME=$(runtime_packages "$so")"
}

# The Debian packages holding the shared libraries a binary links, minus libc and
# the PHP runtime itself: grpc.so needs libgrpc's runtime package, not -dev.
runtime_packages() {
	local libs
	libs=$(ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | xargs -r readlink -f)
	# One dpkg -S for all of them: it reads its whole database on every call.
	# usrmerge: a library dpkg knows as /lib/... is found as /usr/lib/... by ldd.
	dpkg -S $libs ${libs//\/usr\/lib\//\/lib\/} 2>/dev/null | cut -d: -f1 | sort -u |
		grep -vE '^(libc6|libgcc-s1|libstdc\+\+6|zlib1g|libssl3|libzstd1)$' | tr '\n' ' ' | sed 's/ $//'
}

image_java() {
	local jar=$ROOT/java-client/target/java-client.jar ctx=$STAGE/java
	[ -f "$jar" ] || { say "skip rpcbed/java: java-client/target/java-client.jar is not built yet"; MISSING+=" java"; return; }
	fresh_stage java
	cp "$jar" "$ctx/java-client.jar"
	cp "$DOCKER_DIR/java/java-client.sh" "$ctx/java-client.sh"
	build_image java "$ctx"
}

# parallel NAME...: build these images side by side. Their time is mostly apt
# (download, unpack, configure) inside docker build, which overlaps well.
parallel() {
	local n pids=() rc=0 p
	for n in "$@"; do
		(MISSING="" && "image_$n" && echo "$MISSING" >"$STAGE/$n.missing") &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	for n in "$@"; do MISSING+=$(cat "$STAGE/$n.missing" 2>/dev/null || true); done
	[ "$rc" = 0 ] || die "an image build failed (see above)"
}

tags() {
	local n
	for n in base go php java; do
		docker image inspect -f '{{index .RepoTags}}' "rpcbed/$n:latest" 2>/dev/null | tr -d '[]' | tr ' ' '\n' |
			grep -v ':latest$' || true
	done
}

main() {
	local want=("$@") t0=$SECONDS
	[ ${#want[@]} -gt 0 ] || want=(all)
	[ "${want[0]}" = tags ] && { tags; return; }
	docker version >/dev/null 2>&1 || die "no Docker engine answers: run docker/engine.sh (make engine)"
	# One build at a time (make images and a test may overlap): they share $STAGE.
	mkdir -p "$STAGE"
	exec 9>"$STAGE/.lock"
	flock 9
	MISSING=""
	build_base
	BASE_ID=$(docker image inspect -f '{{.Id}}' "$BASE" 2>/dev/null || echo "$BASE")
	local w
	for w in "${want[@]}"; do
		case $w in
		all) image_go; parallel php java ;;
		base) ;;
		go | php | java) "image_$w" ;;
		*) die "unknown image $w (want all|base|go|php|java)" ;;
		esac
	done
	say "done in $((SECONDS - t0)) s${MISSING:+; not built (inputs missing):$MISSING}"
	if [ -n "$MISSING" ] && [ -n "${RPCBED_IMAGES_STRICT:-}" ]; then
		exit 1
	fi
}

main "$@"
