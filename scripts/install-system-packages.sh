#!/usr/bin/env bash
# The Debian packages the test suite needs, in one place:
#   chromium       the docs page test renders the page in headless Chromium (/usr/bin/chromium)
#   libxml2-utils  xmllint: validates what the SMP interface publishes against the Peppol SMP schemas
#   xmlsec1        verifies the SMP interface's XML signatures with an independent implementation
#   openjdk-17-jdk-headless  the JDK's XML signature verifies them too, as a Java access point does
#                  (test/helpers/VerifySignatures.java, run from its source: the JDK's compiler)
#   postgresql     the server binaries (initdb, pg_basebackup, pg_ctl, pg_stat_statements): the standby tests and the
#                  benchmark start a primary and a streaming standby of their own (the suite's shared server is its too)
#   nginx-light    a real HTTP cache in front of the registry: the public answers' validators and freshness through it
# Installs what is missing with apt-get (root), and returns at once when everything is there.
# `--check` installs nothing: it lists what is missing and exits 1 (the test run's first step calls it).
set -euo pipefail

PACKAGES=(chromium libxml2-utils xmlsec1 openjdk-17-jdk-headless postgresql nginx-light)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null | grep -qx installed; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "Missing system packages: ${missing[*]}" >&2
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
