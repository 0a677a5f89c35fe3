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
