#!/usr/bin/env bash
# Installs a Java runtime + compiler and Maven (Debian/Ubuntu: default-jdk-headless, maven) when java or mvn is
# missing. Only ycsb-driver/record-trace.sh needs them (to run the real YCSB 0.17 for trace comparisons); the
# build and the default tests do not.
# Usage: scripts/setup-java.sh            (uses sudo when not root)
set -euo pipefail
if command -v java >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then
  echo "setup-java.sh: java and mvn are already installed ($(command -v java), $(command -v mvn))"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-java.sh: no apt-get here; install a JDK (11 or newer) and Maven 3 by hand, then rerun" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "setup-java.sh: not root and no sudo: run as root, or install default-jdk-headless and maven" >&2
    exit 1
  fi
  sudo=(sudo)
fi
echo "setup-java.sh: installing default-jdk-headless and maven (apt-get)"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends default-jdk-headless maven
java -version 2>&1 | head -1
mvn -v 2>&1 | head -1
