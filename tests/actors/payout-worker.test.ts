import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { HostCommand } from '../../actors/messages.js';
import { PayoutWorker, type PayoutSource } from '../../actors/payout-worker.js';
import type { Pact, Payout } from '../../machines/pact/types.js';
import type { PayoutRequest, Rail } from '../../rails/rail.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

// The payout worker on stand-ins for the rail, the host and the read model: what it reads, pays and records,
// told of a record by the projector or finding a pact in its scan.

const payout = (pact: Pact, party: string, status: Payout['status']): Payout => ({
  party: party as Payout['party'],
  kind: 'pot',
  amount: '100',
  key: `${pact.id}:settle:pot:${party}`,
  transition: 'settle',
  status,
  railRef: status === 'paid' ? 'mock:r0' : null,
});

/** A settled pact with one payout paid and one not. */
function settled(): Pact {
  const pact = pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair()));
  const [seller, buyer] = pact.parties.map((p) => p.party);
  return { ...pact, state: 'SETTLED', payouts: [payout(pact, seller!, 'paid'), payout(pact, buyer!, 'pending')] };
}

function fixture(stored: Pact[], scanned: string[] = []) {
  const reads: string[] = [];
  const paid: string[] = [];
  const recorded: HostCommand[] = [];
  const rail = { name: 'mock', payout: async (request: PayoutRequest) => (paid.push(request.key), { key: request.key, ref: `mock:${request.key}` }) } as unknown as Rail;
  const source: PayoutSource = {
    pact: async (pactId) => (reads.push(pactId), stored.find((p) => p.id === pactId)),
    withUnpaidPayouts: async function* () {
      yield* scanned;
    },
    mine: () => true,
  };
  const bus = { send: async (_pactId: string, command: HostCommand) => (recorded.push(command), { ok: true as const, pact: stored[0]! }) };
  return { reads, paid, recorded, worker: new PayoutWorker(new Map([[rail.name, rail]]), bus as never, source) };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

test('a record the projector tells of is read again before it is paid: an answered commit may be newer than what is written', async () => {
  const pact = settled();
  const { reads, paid, recorded, worker } = fixture([pact]);
  worker.notice(pact);
  await settle();
  assert.equal(reads, [pact.id]);
  assert.equal(paid, [pact.payouts[1]!.key], 'only the unpaid payout');
  assert.equal(recorded, [{ type: 'recordPayouts', paid: [{ key: pact.payouts[1]!.key, railRef: `mock:${pact.payouts[1]!.key}` }] }]);
  worker.stop();
});

test('a told record whose newest holds every payout paid sends nothing to the rail', async () => {
  const told = settled();
  const newest = { ...told, payouts: told.payouts.map((p) => ({ ...p, status: 'paid' as const, railRef: 'mock:r1' })) };
  const { paid, recorded, worker } = fixture([newest]);
  worker.notice(told);
  await settle();
  assert.equal(paid, []);
  assert.equal(recorded, []);
  worker.stop();
});

test('a pact found by the scan is read first, then paid', async () => {
  const pact = settled();
  const { reads, paid, worker } = fixture([pact], [pact.id]);
  await worker.start();
  await settle();
  assert.equal(reads, [pact.id]);
  assert.equal(paid, [pact.payouts[1]!.key]);
  worker.stop();
});

test.run();
