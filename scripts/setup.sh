#!/usr/bin/env bash
# Installs what building and testing need on a fresh machine. Safe to run again.
set -euo pipefail

if ! command -v cargo >/dev/null; then
  echo "setup: cargo is missing; install Rust (https://rustup.rs) first" >&2
  exit 1
fi
# rustfmt and clippy come with most toolchains; add them where rustup can.
for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    rustup component add "$component"
  fi
done

# What the tests need from Debian: Chromium and chromedriver for the browser tests
# (tests/api/browser*.rs), PostgreSQL for the PostgreSQL pass of the suite and its fault
# tests (tests/api/pg.rs starts throwaway clusters itself; no service is left running).
# Only installs when something is missing, so a second run is quick.
have_postgres() { compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && command -v psql >/dev/null && command -v pg_dump >/dev/null; }
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver || ! -e /etc/ssl/certs/ca-certificates.crt ]] || ! have_postgres; then
  if ! command -v apt-get >/dev/null; then
    echo "setup: chromium, chromedriver or postgresql is missing and apt-get is not available;" \
      "install Chromium and chromedriver (/usr/bin/chromium, /usr/bin/chromedriver) and PostgreSQL (/usr/lib/postgresql/*/bin)" >&2
    exit 1
  fi
  sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null; then
      sudo=(sudo)
    else
      echo "setup: installing chromium needs root, and sudo is not available" >&2
      exit 1
    fi
  fi
  echo "setup: installing chromium, chromium-driver and postgresql" >&2
  # The tests make their own clusters; the package's default cluster is not wanted.
  if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
    ${sudo[@]+"${sudo[@]}"} mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" | ${sudo[@]+"${sudo[@]}"} tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  ${sudo[@]+"${sudo[@]}"} apt-get update
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold chromium chromium-driver ca-certificates \
    postgresql postgresql-client
fi
