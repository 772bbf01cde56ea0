#!/usr/bin/env bash
# Starts the 3-node NATS JetStream cluster of deploy/nats-cluster on loopback (clients on 4301-4303), with a
# NATS user per Pact role (credentials in ./data/nats-auth), stores under ./data/nats-n{1,2,3}, logs under
# ./data/nats-n{1,2,3}.log. Stop with: pkill -f data/nats-n
set -euo pipefail
cd "$(dirname "$0")/.."
node --import tsx deploy/nats-auth.ts data/nats-auth >/dev/null
for n in 1 2 3; do
  mkdir -p "data/nats-n$n"
  cat "deploy/nats-cluster/n$n.conf" data/nats-auth/auth.conf > "data/nats-n$n.conf"
  nats-server -c "data/nats-n$n.conf" -js -sd "data/nats-n$n" -l "data/nats-n$n.log" &
done
echo "NATS_URL=nats://127.0.0.1:4301,nats://127.0.0.1:4302,nats://127.0.0.1:4303"
echo "PACT_NATS_CREDENTIALS=$PWD/data/nats-auth/credentials.json"
wait
