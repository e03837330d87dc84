#!/bin/sh
# java-client: the Java bench client and baseline servers (java -jar java-client.jar).
# JAVA_OPTS passes JVM flags, e.g. JAVA_OPTS="-Xmx512m -XX:ActiveProcessorCount=1".
exec java ${JAVA_OPTS:-} -jar /opt/rpcbed/java-client.jar "$@"
