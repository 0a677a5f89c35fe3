#!/usr/bin/env bash
# The reliability proofs at the size CI has time for (about 7 minutes after the release
# build): kill -9 under create load and webhook delivery through outages and restarts,
# on both backends, then a PostgreSQL failover (primary killed, standby promoted) in
# three modes. Each fails CI on a single lost invite or event (the asynchronous failover
# reports its losses instead). The full runs and the 30-minute soak are documented in
# docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release --locked --quiet
export NO_BUILD=1
for backend in sqlite postgres; do
  echo "== proofs on $backend ==" >&2
  bash scripts/proofs/kill9.sh 5 --backend "$backend"
  bash scripts/proofs/webhooks.sh 60 --backend "$backend"
done
echo "== failover proofs (PostgreSQL primary and standby) ==" >&2
bash scripts/proofs/failover.sh 5                     # synchronous standby: nothing lost
bash scripts/proofs/failover.sh 1 --promote-delay 3   # 3 s without a primary: 503 + Retry-After
bash scripts/proofs/failover.sh 2 --async             # asynchronous: losses reported
