#!/bin/sh
# Installs the pact CLI from {{base}}/pact-cli.tgz into $PACT_PREFIX (default: $HOME/.pact/cli). No root needed:
#   curl -fsSL {{base}}/install | sh
set -eu

server='{{base}}'
prefix="${PACT_PREFIX:-$HOME/.pact/cli}"

fail() { echo "pact install: $*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || fail "Node.js 20 or newer is needed (https://nodejs.org)"
command -v npm >/dev/null 2>&1 || fail "npm is needed (it comes with Node.js)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || fail "Node.js 20 or newer is needed; this is $(node --version)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
if command -v curl >/dev/null 2>&1; then
  curl -fsSL "$server/pact-cli.tgz" -o "$tmp/pact-cli.tgz" || fail "could not download $server/pact-cli.tgz"
elif command -v wget >/dev/null 2>&1; then
  wget -q -O "$tmp/pact-cli.tgz" "$server/pact-cli.tgz" || fail "could not download $server/pact-cli.tgz"
else
  fail "curl or wget is needed"
fi

mkdir -p "$prefix"
npm install --global --prefix "$prefix" --no-audit --no-fund --loglevel=error "$tmp/pact-cli.tgz" >/dev/null \
  || fail "npm could not install the package into $prefix"

echo "pact $("$prefix/bin/pact" --version) is installed: $prefix/bin/pact"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "Add it to your PATH:  export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
echo "Then make your identity:  pact init --server $server"
