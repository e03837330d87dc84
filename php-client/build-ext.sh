#!/usr/bin/env bash
# build-ext.sh builds, from Debian's own source packages, the three PHP extensions
# php-client runs in production:
#   - the official gRPC extension (grpc.so) and the official Grpc\ PHP library, from
#     the grpc source package, so they match the system libgrpc;
#   - Google's protobuf C extension (protobuf.so), from the protobuf source package
#     whose version the pure-PHP runtime (php-google-protobuf) has, so both runtimes
#     read the same generated code;
#   - ZeroC Ice's PHP extension (ice.so), from the zeroc-ice source package with
#     ext/ice-php82.patch (upstream's PHP 8.2 support from Ice 3.7.9): Debian 12's
#     php-zeroc-ice 3.7.8 predates it and dies with a multi-GB allocation on every
#     Ice local exception and now and then on a good reply (README: Known library
#     problems). Only the extension is compiled, against libzeroc-ice-dev; the Ice
#     PHP runtime files (Ice.php, Ice/*.php) stay php-zeroc-ice's.
# Output: php-client/ext/build/ (gitignored):
#   grpc.so                     the gRPC extension (load with -d extension=.../grpc.so)
#   grpc/src/php/lib/Grpc/      the Grpc\ library
#   grpc/etc/roots.pem          read by Grpc\BaseStub as ../../../../etc/roots.pem
#   VERSION                     grpc.so's stamp: grpc source version and PHP API
#   protobuf.so                 the protobuf C extension
#   PROTOBUF_VERSION            protobuf.so's stamp: protobuf source version and PHP API
#   ice.so                      the patched Ice extension
#   ICE_VERSION                 ice.so's stamp: zeroc-ice source version, patch hash, PHP API
#   php-conf.d/                 PHP's conf.d without php-zeroc-ice's ice.ini (links to
#                               the rest), for a php that reads the ini files yet must
#                               load ice.so instead (PHP_INI_SCAN_DIR=...: php.mk's phpunit)
# Each is a no-op (well under a second) when its stamp matches the installed
# libgrpc-dev / php-google-protobuf / libzeroc-ice-dev, the patch and PHP API. Needs root only the first time, to
# add a deb-src entry and install build deps.
#   build-ext.sh [grpc|protobuf|ice]...   (default: all three)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$here/ext/build
pkgs=(dpkg-dev php-dev libgrpc-dev php-google-protobuf gcc g++ libc6-dev make patch
	libzeroc-ice-dev php-zeroc-ice)

log() { echo "build-ext: $*" >&2; }

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	log "installing ${missing[*]}"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
phpapi=$(php-config --phpapi)

# deb_src PACKAGE: make `apt-get source PACKAGE` work, mirroring the system's own
# Debian "deb" entries as deb-src, so no host name lives here.
deb_src() {
	apt-cache showsrc "$1" 2>/dev/null | grep -q "^Package: $1\$" && return
	local src=/etc/apt/sources.list.d/rpcbed-deb-src.sources tmp f
	if [[ ! -f $src && ! -f ${src%.sources}.list ]]; then
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
	apt-get update -qq >&2
}

# fetch_source PACKAGE VERSION DIR: the unpacked source tree (patches applied) in DIR.
fetch_source() {
	deb_src "$1"
	log "fetching $1 $2 source"
	(cd "$3" && apt-get source -qq "$1=$2" >/dev/null 2>&1) || (cd "$3" && apt-get source -qq "$1" >/dev/null)
	find "$3" -maxdepth 1 -mindepth 1 -type d -name "$1-*" | head -1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

build_grpc() {
	local version stamp tree ext
	version=$(dpkg-query -W -f='${source:Version}' libgrpc-dev)
	stamp="grpc=$version phpapi=$phpapi"
	if [[ -f $out/grpc.so && -f $out/grpc/src/php/lib/Grpc/BaseStub.php && "$(cat "$out/VERSION" 2>/dev/null)" == "$stamp" ]]; then
		return 0
	fi
	mkdir -p "$work/grpc"
	tree=$(fetch_source grpc "$version" "$work/grpc")
	[[ -n $tree && -d $tree/src/php/ext/grpc ]] || { log "grpc source tree not found"; exit 1; }

	log "building grpc.so (phpize + configure + make)"
	ext=$work/grpc-ext
	cp -r "$tree/src/php/ext/grpc" "$ext"
	(
		cd "$ext"
		phpize >/dev/null 2>&1
		GRPC_LIB_SUBDIR=lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH) ./configure --enable-grpc >/dev/null
		make -s -j"$(nproc)" >/dev/null 2>&1 || make -j1
	)
	php -n -d extension="$ext/modules/grpc.so" -r 'exit(extension_loaded("grpc") ? 0 : 1);' || { log "grpc.so does not load"; exit 1; }
	# Replace grpc's files only (protobuf.so stays), the stamp last.
	rm -f "$out/VERSION"
	rm -rf "$out/grpc"
	mkdir -p "$out/grpc/src/php/lib" "$out/grpc/etc"
	cp -r "$tree/src/php/lib/Grpc" "$out/grpc/src/php/lib/Grpc"
	cp "$tree/etc/roots.pem" "$out/grpc/etc/roots.pem"
	cp "$ext/modules/grpc.so" "$out/grpc.so.new" && mv "$out/grpc.so.new" "$out/grpc.so"
	echo "$stamp" >"$out/VERSION"
	log "built $out/grpc.so ($stamp)"
}

build_protobuf() {
	local version stamp tree ext
	version=$(dpkg-query -W -f='${source:Version}' php-google-protobuf)
	stamp="protobuf=$version phpapi=$phpapi"
	if [[ -f $out/protobuf.so && "$(cat "$out/PROTOBUF_VERSION" 2>/dev/null)" == "$stamp" ]]; then
		return 0
	fi
	mkdir -p "$work/protobuf"
	tree=$(fetch_source protobuf "$version" "$work/protobuf")
	[[ -n $tree && -d $tree/php/ext/google/protobuf && -d $tree/third_party/utf8_range ]] ||
		{ log "protobuf source tree (php/ext/google/protobuf, third_party/utf8_range) not found"; exit 1; }

	log "building protobuf.so (phpize + configure + make)"
	ext=$work/protobuf-ext
	cp -r "$tree/php/ext/google/protobuf" "$ext"
	# config.m4 compiles third_party/utf8_range from inside the extension's directory.
	mkdir -p "$ext/third_party"
	cp -r "$tree/third_party/utf8_range" "$ext/third_party/utf8_range"
	(
		cd "$ext"
		phpize >/dev/null 2>&1
		./configure >/dev/null
		make -s -j"$(nproc)" >/dev/null 2>&1 || make -j1
	)
	php -n -d extension="$ext/modules/protobuf.so" -r 'exit(extension_loaded("protobuf") ? 0 : 1);' || { log "protobuf.so does not load"; exit 1; }
	rm -f "$out/PROTOBUF_VERSION"
	cp "$ext/modules/protobuf.so" "$out/protobuf.so.new" && mv "$out/protobuf.so.new" "$out/protobuf.so"
	echo "$stamp" >"$out/PROTOBUF_VERSION"
	log "built $out/protobuf.so ($stamp)"
}

build_ice() {
	local version patch=$here/ext/ice-php82.patch stamp tree ext out_
	version=$(dpkg-query -W -f='${source:Version}' libzeroc-ice-dev)
	stamp="ice=$version patch=$(sha256sum <"$patch" | cut -c1-16) phpapi=$phpapi"
	if [[ -f $out/ice.so && "$(cat "$out/ICE_VERSION" 2>/dev/null)" == "$stamp" ]]; then
		return 0
	fi
	mkdir -p "$work/ice"
	tree=$(fetch_source zeroc-ice "$version" "$work/ice")
	[[ -n $tree && -d $tree/php/src/php && -f $tree/cpp/src/Slice/PHPUtil.cpp ]] ||
		{ log "zeroc-ice source tree (php/src/php, cpp/src/Slice/PHPUtil.cpp) not found"; exit 1; }
	(cd "$tree" && patch -p1 --forward --batch --quiet) <"$patch" >"$work/ice-patch.log" 2>&1 ||
		{ cat "$work/ice-patch.log" >&2; log "ext/ice-php82.patch does not apply to zeroc-ice $version"; exit 1; }

	# Only the extension, as Ice's php/src/php/Makefile.mk lists it (its sources
	# plus Slice's PHPUtil.cpp, linked with IceDiscovery, IceLocatorDiscovery,
	# IceSSL, Ice), against libzeroc-ice-dev instead of a whole Ice build. Flags
	# as Ice's optimised Linux build (NDEBUG: the patch's releases depend on it),
	# PHP namespaces on as in Debian's build.
	log "building ice.so (php/src/php, g++ -j$(nproc))"
	ext=$work/ice-ext
	mkdir -p "$ext/Slice"
	cp "$tree"/php/src/php/*.cpp "$tree"/php/src/php/*.h "$ext/"
	cp "$tree"/cpp/src/Slice/PHPUtil.cpp "$tree"/cpp/src/Slice/PHPUtil.h "$ext/Slice/"
	cat >"$ext/Makefile" <<-'EOF'
		.RECIPEPREFIX := >
		objs := $(patsubst %.cpp,%.o,$(wildcard *.cpp Slice/*.cpp))
		ice.so: $(objs)
		> $(CXX) -shared -pthread -o $@ $^ -lIceDiscovery -lIceLocatorDiscovery -lIceSSL -lIce
		%.o: %.cpp $(wildcard *.h Slice/*.h)
		> $(CXX) $(CXXFLAGS) -c $< -o $@
	EOF
	make -s -C "$ext" -j"$(nproc)" \
		CXXFLAGS="-O2 -fPIC -fvisibility=hidden -pthread -DNDEBUG -DICEPHP_USE_NAMESPACES -I. $(php-config --includes) -w"
	# Loads, and without the start-up warnings 3.7.8 gives under PHP 8.2.
	out_=$(php -n -d extension="$ext/ice.so" -r 'echo extension_loaded("ice") ? "ok" : "not loaded";' 2>&1) || true
	[[ $out_ == ok ]] || { printf '%s\n' "$out_" >&2; log "ice.so does not load cleanly"; exit 1; }
	rm -f "$out/ICE_VERSION"
	cp "$ext/ice.so" "$out/ice.so.new" && mv "$out/ice.so.new" "$out/ice.so"
	echo "$stamp" >"$out/ICE_VERSION"
	log "built $out/ice.so ($stamp)"
}

# php_conf_d: $out/php-conf.d, PHP's conf.d without the ini that loads the system's
# ice.so (php-zeroc-ice's ice.ini), the others linked. Rewritten each run (it is
# cheap), so an extension installed since shows up.
php_conf_d() {
	local sys f dir=$out/php-conf.d
	sys=$(php -n -r 'echo PHP_CONFIG_FILE_SCAN_DIR;')
	rm -rf "$dir.new"
	mkdir -p "$dir.new"
	for f in "$sys"/*.ini; do
		[[ -f $f ]] || continue
		grep -qE '^[[:space:]]*extension[[:space:]]*=[[:space:]]*"?([^"]*/)?ice(\.so)?"?[[:space:]]*$' "$f" && continue
		ln -s "$(readlink -f "$f")" "$dir.new/${f##*/}"
	done
	rm -rf "$dir"
	mv "$dir.new" "$dir"
}

want=("$@")
((${#want[@]})) || want=(grpc protobuf ice)
for w in "${want[@]}"; do
	case $w in
	grpc) build_grpc ;;
	protobuf) build_protobuf ;;
	ice) build_ice; php_conf_d ;;
	*) log "unknown extension $w (want grpc, protobuf or ice)"; exit 2 ;;
	esac
done
