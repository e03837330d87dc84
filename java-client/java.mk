# java-client: the Java bench client, built with the Java baseline servers of
# java-server/ into one jar (Maven, JDK 17; `java-client serve` starts a baseline).
# Included by the top-level Makefile; paths are relative to the repository root.
JAVA_DIR := java-client
JAVA_SERVER_DIR := java-server
JAVA_JAR := $(JAVA_DIR)/target/java-client.jar
JAVA_GEN := $(JAVA_DIR)/src/main/gen
MVN      ?= mvn
MVN_FLAGS ?= -B -ntp

SETUP_TARGETS    += setup-java
TEST_TARGETS     += test-java
GENERATE_TARGETS += generate-java

setup-java: $(JAVA_JAR) ## build java-client/target/java-client.jar (installs JDK 17 + Maven when missing)

# IceSSL for Java: Maven Central's com.zeroc:ice jar has no IceSSL and no icessl jar is
# served there; Debian's libzeroc-ice3.7-java (the same 3.7.8 sources) ships it. It goes
# into the local Maven repository as com.zeroc:icessl:3.7.8, which the pom names.
ICESSL_DEB_JAR := /usr/share/java/icessl-3.7.8.jar
ICESSL_M2_JAR  := $(HOME)/.m2/repository/com/zeroc/icessl/3.7.8/icessl-3.7.8.jar

$(ICESSL_M2_JAR):
	@command -v $(MVN) >/dev/null || { \
	  echo "installing openjdk-17-jdk-headless and maven"; \
	  apt-get update -qq && apt-get install -y --no-install-recommends openjdk-17-jdk-headless maven; }
	@test -f $(ICESSL_DEB_JAR) || { echo "installing libzeroc-ice3.7-java (IceSSL)"; \
	  apt-get update -qq && apt-get install -y --no-install-recommends libzeroc-ice3.7-java; }
	$(MVN) $(MVN_FLAGS) -q org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file \
	  -Dfile=$(ICESSL_DEB_JAR) -DgroupId=com.zeroc -DartifactId=icessl -Dversion=3.7.8 \
	  -Dpackaging=jar -DgeneratePom=true

# The jar is rebuilt when a source, the pom or generated code changed.
$(JAVA_JAR): $(JAVA_DIR)/pom.xml $(shell find $(JAVA_DIR)/src/main $(JAVA_SERVER_DIR)/src/main -type f 2>/dev/null) | $(ICESSL_M2_JAR)
	@command -v javac >/dev/null && command -v $(MVN) >/dev/null || { \
	  echo "installing openjdk-17-jdk-headless and maven"; \
	  apt-get update -qq && apt-get install -y --no-install-recommends openjdk-17-jdk-headless maven; }
	cd $(JAVA_DIR) && $(MVN) $(MVN_FLAGS) -q -DskipTests package
	@test -f $(JAVA_JAR)

test-java: $(JAVA_JAR) ## JUnit suites of java-client and java-server (Maven Surefire)
	cd $(JAVA_DIR) && $(MVN) $(MVN_FLAGS) test

# Generated code is committed; regenerating needs protoc, Debian's grpc-java plugin
# (grpc_java_plugin 1.41: Maven Central does not serve protoc-gen-grpc-java 1.85's
# binary), thrift 0.17 and slice2java 3.7.8, installed here when missing.
JAVA_GEN_PKGS := protobuf-compiler protobuf-compiler-grpc-java-plugin thrift-compiler zeroc-ice-compilers

setup-java-generate: ## install the code generators generate-java needs (apt, when missing)
	@missing=""; for t in protoc grpc_java_plugin thrift slice2java; do command -v $$t >/dev/null || missing=1; done; \
	if [ -n "$$missing" ]; then apt-get update -qq && apt-get install -y --no-install-recommends $(JAVA_GEN_PKGS); fi

generate-java: setup-java-generate ## regenerate java-client/src/main/gen from idl/
	rm -rf $(JAVA_GEN) && mkdir -p $(JAVA_GEN)
	protoc -I idl --java_out=$(JAVA_GEN) --plugin=protoc-gen-grpc-java=$$(command -v grpc_java_plugin) \
	  --grpc-java_out=$(JAVA_GEN) idl/data.proto
	thrift --gen java:generated_annotations=suppress -out $(JAVA_GEN) idl/data.thrift
	slice2java --output-dir $(JAVA_GEN) idl/data.ice

IDLE ?= 10000
idle-java: $(JAVA_JAR) ## IDLE idle connections (default 10000) against each Java baseline while a normal call runs; figures in the test log
	RPCBED_IDLE_CONNS=$(IDLE) go test ./java-server -run TestJavaBaselinesIdleConnections -count=1 -v -timeout 30m

.PHONY: setup-java setup-java-generate test-java generate-java idle-java
