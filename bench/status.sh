#!/usr/bin/env bash
# Credential status (docs/credential-status.md): what a status list costs on one core.
#  1. A 1,000,000-entry one-bit list (1 % revoked, and half revoked: incompressible),
#     loaded and verified 21 times (zlib, CBOR, the signature, the signer's chain): median,
#     max, and the bytes the list holds in memory.
#  2. One answer verified 2000 times with and without `status` in its MSO (5 rounds,
#     median of medians), and the lookup of a list in hand (20,000 times): what an answer
#     pays for its status once its list is fetched.
# The lists are made by the test kit, served on loopback; nothing else is started.
#
#   bash bench/status.sh                  # PROFILE=release (default) or dev; CPU=0
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release} CPU=${CPU:-0}
flags=()
[[ $PROFILE == release ]] && flags=(--release)
export CARGO_PROFILE_DEV_DEBUG=0
taskset -c "$CPU" cargo test "${flags[@]}" --test api credential_status_bench -- \
  --ignored --nocapture --test-threads 1 2>&1 | grep -E '^(1,000,000|verify without)|test result'
