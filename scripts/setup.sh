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

# The browser test (tests/api/browser.rs) drives Debian's Chromium through chromedriver.
# Only installs when something is missing, so a second run is quick.
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver || ! -e /etc/ssl/certs/ca-certificates.crt ]]; then
  if ! command -v apt-get >/dev/null; then
    echo "setup: chromium and chromedriver are missing and apt-get is not available;" \
      "install Chromium and a matching chromedriver at /usr/bin/chromium and /usr/bin/chromedriver" >&2
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
  echo "setup: installing chromium and chromium-driver" >&2
  ${sudo[@]+"${sudo[@]}"} apt-get update
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends chromium chromium-driver ca-certificates
fi
