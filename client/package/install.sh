#!/bin/sh
# Installs the pact CLI from {{base}}/pact-cli.tgz into $PACT_PREFIX (default: $HOME/.pact/cli). No root needed:
#   curl -fsSL {{base}}/install | sh
# Everything runs from main, called on the last line, so a download cut short runs nothing.
set -eu

server='{{base}}'
sha256='{{sha256}}'

fail() { echo "pact install: $*" >&2; exit 1; }

main() {
  if [ -n "${PACT_PREFIX:-}" ]; then prefix=$PACT_PREFIX
  elif [ -n "${HOME:-}" ]; then prefix=$HOME/.pact/cli
  else fail "set HOME or PACT_PREFIX (where to install)"
  fi

  command -v node >/dev/null 2>&1 || fail "Node.js 20 or newer is needed (https://nodejs.org)"
  command -v npm >/dev/null 2>&1 || fail "npm is needed (it comes with Node.js)"
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge 20 ] || fail "Node.js 20 or newer is needed; this is $(node --version)"

  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT INT TERM
  package="$tmp/pact-cli.tgz"
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL "$server/pact-cli.tgz" -o "$package" || fail "could not download $server/pact-cli.tgz"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$package" "$server/pact-cli.tgz" || fail "could not download $server/pact-cli.tgz"
  else
    fail "curl or wget is needed"
  fi
  got=$(node -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync(process.argv[1])).digest("hex"))' "$package")
  [ "$got" = "$sha256" ] || fail "the package downloaded is not the one this installer names (sha256 $got, expected $sha256)"

  mkdir -p "$prefix"
  npm install --global --prefix "$prefix" --ignore-scripts --no-audit --no-fund --no-update-notifier --loglevel=error "$package" >/dev/null \
    || fail "npm could not install the package into $prefix"

  echo "pact $("$prefix/bin/pact" --version) is installed: $prefix/bin/pact"
  case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "Add it to your PATH:  export PATH=\"$prefix/bin:\$PATH\"" ;;
  esac
  echo "Then make your identity:  pact init --server $server"
}

main "$@"
