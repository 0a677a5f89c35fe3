#!/usr/bin/env bash
# The test command: installs what the tests need (scripts/setup.sh; quick when all is
# there), then runs the whole suite on SQLite and the integration suite again on
# PostgreSQL (a throwaway cluster the tests start themselves; see tests/api/pg.rs). No
# test skips for want of something setup.sh installs: a missing tool fails its tests.
# The first run covers the workspace (crates/zk and crates/alloc too). Extra arguments go to both `cargo
# test` runs (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

echo "== SQLite ==" >&2
cargo test --workspace --locked "$@"
echo "== PostgreSQL ==" >&2
AGEGATE_TEST_BACKEND=postgres cargo test --locked --test api "$@"
