#!/usr/bin/env bash
# Starts the 3-node NATS JetStream cluster of deploy/nats-cluster on loopback (clients on 4301-4303),
# stores under ./data/nats-n{1,2,3}, logs under ./data/nats-n{1,2,3}.log. Stop with: pkill -f deploy/nats-cluster
set -euo pipefail
cd "$(dirname "$0")/.."
for n in 1 2 3; do
  mkdir -p "data/nats-n$n"
  nats-server -c "deploy/nats-cluster/n$n.conf" -js -sd "data/nats-n$n" -l "data/nats-n$n.log" &
done
echo "NATS_URL=nats://127.0.0.1:4301,nats://127.0.0.1:4302,nats://127.0.0.1:4303"
wait
