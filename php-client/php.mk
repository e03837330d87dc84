# php-client's make targets; the top-level Makefile includes this fragment.
SETUP_TARGETS    += setup-php
TEST_TARGETS     += test-php
GENERATE_TARGETS += generate-php

PHP_APT := php-cli php-curl php-google-protobuf php-thrift php-zeroc-ice phpunit php-dev \
	libgrpc-dev libzeroc-ice-dev g++ dpkg-dev protobuf-compiler protobuf-compiler-grpc thrift-compiler \
	zeroc-ice-compilers apache2-utils

setup-php: ## PHP: apt-get install what is missing, build grpc.so, protobuf.so and the patched ice.so (php-client/build-ext.sh), link bin/php-client and bin/php-front
	@missing=$$(for p in $(PHP_APT); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@php-client/build-ext.sh
	@mkdir -p $(BIN) && ln -sf ../php-client/bin/php-client $(BIN)/php-client && ln -sf ../php-client/bin/php-front $(BIN)/php-front

# grpc.so, protobuf.so and the Thrift accelerator are not in php.ini: load them for
# the run (the production runtime, php-client's default; RuntimeTest runs both in
# processes of their own). ice.so is build-ext.sh's patched one: PHP reads
# build-ext.sh's php-conf.d, the system's conf.d without php-zeroc-ice's ice.ini.
PHPUNIT_PHP := PHP_INI_SCAN_DIR=$(CURDIR)/php-client/ext/build/php-conf.d php -d extension=$(CURDIR)/php-client/ext/build/ice.so \
	-d extension=$(CURDIR)/php-client/ext/build/protobuf.so -d extension=$(CURDIR)/php-client/ext/build/grpc.so -d extension=thrift_protocol.so

test-php: setup-php ## PHP: phpunit (starts go-server and, when built, the Java Ice baseline)
	$(PHPUNIT_PHP) $$(command -v phpunit) -c php-client/phpunit.xml

generate-php: ## PHP: regenerate php-client/gen from idl/ (protoc + grpc_php_plugin, thrift, slice2php)
	rm -rf php-client/gen && mkdir -p php-client/gen/ice
	protoc -I idl --php_out=php-client/gen --grpc_out=php-client/gen \
	  --plugin=protoc-gen-grpc=$$(command -v grpc_php_plugin) idl/data.proto
	thrift --gen php -out php-client/gen idl/data.thrift
	slice2php --output-dir php-client/gen/ice idl/data.ice

# PHP's runtime choice side by side with go-client (scripts/bench-php-runtime.sh:
# ITEMS, PROTOS, DUR, ROUNDS, PIN). Prints numbers and never fails on them.
bench-php-runtime: setup-php build ## go-client, php (C runtimes) and php-pure side by side, datalist c=1: req/s, client CPU per call, ratios to go paired by round (about 5 min)
	scripts/bench-php-runtime.sh

.PHONY: setup-php test-php generate-php bench-php-runtime
