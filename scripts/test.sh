#!/usr/bin/env bash
# The test command: the whole suite on SQLite, then the integration suite again on
# PostgreSQL (a throwaway cluster the tests start themselves; see tests/api/pg.rs).
# Extra arguments go to both `cargo test` runs (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== SQLite ==" >&2
cargo test --locked "$@"
echo "== PostgreSQL ==" >&2
AGEGATE_TEST_BACKEND=postgres cargo test --locked --test api "$@"
