#!/usr/bin/env bash
# The reliability proofs at the size CI has time for (about 4 minutes after the release
# build): kill -9 under create load and webhook delivery through outages and restarts,
# on both backends. Each fails CI on a single lost invite or event. The full runs and
# the 30-minute soak are documented in README → "Reliability".
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release --locked --quiet
export NO_BUILD=1
for backend in sqlite postgres; do
  echo "== proofs on $backend ==" >&2
  bash scripts/proofs/kill9.sh 5 --backend "$backend"
  bash scripts/proofs/webhooks.sh 60 --backend "$backend"
done
