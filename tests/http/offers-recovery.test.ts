import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OfferJournal } from '../../actors/offer-journal.js';
import { acceptedPactId, signedOfferOf } from '../../machines/offer/rules.js';
import { randomUUID } from 'node:crypto';
import { commandSubject, partitionOf } from '../../actors/subjects.js';
import type { AcceptCall, Offer } from '../../machines/offer/types.js';
import { generateKeyPair, signed } from '../../protocol/sign.js';
import { runAudit } from '../support/audit.js';
import { DAY_MS, offerBy } from '../support/offers.js';
import { Stack } from '../support/stack.js';

// A node that recorded an acceptance on the offer's journal and died before it created the pact leaves an
// acceptance without its pact. Here the test is that node: it appends the acceptance as a host would, then
// the service is killed and started again. The reconciler creates the pact once the acceptance is 30 s old
// (on the server clock), and the accepter's retry meets that same pact.

const test = suite<{ stack: Stack; nc: NatsConnection }>('an acceptance whose pact was never created');

test.before(async (context) => {
  context.stack = await Stack.start();
  context.nc = await connect({ servers: context.stack.natsUrl });
});
test.after(async ({ stack, nc }) => {
  await nc.close();
  await stack.stop();
});

test('the reconciler creates the pact; the retry answers with it; the unit is taken once; the audit verifies it', async ({ stack, nc }) => {
  const seller = generateKeyPair();
  const buyer = generateKeyPair();
  const offer = (await stack.client.request('POST', '/offers', offerBy(seller, stack.now, { inventory: 2, expiresAt: stack.now + 3 * DAY_MS }))).body.offer as Offer;
  const envelope = signed(
    { action: 'offers.accept', call: { acceptanceId: 'lost' }, pactId: offer.offerId, stateNonce: 0, issuedAt: stack.now, signer: buyer.party },
    buyer,
  ) as AcceptCall;
  const pactId = acceptedPactId(offer.offerId, buyer.party, 'lost');
  const journal = new OfferJournal(jetstream(nc), await jetstreamManager(nc));
  const [published] = await journal.entriesAfter(offer.offerId, 0);
  await journal.append(
    { offerId: offer.offerId, nonce: 1, event: { type: 'accepted', at: stack.now, signer: buyer.party, acceptanceId: 'lost', pactId }, envelope },
    published!.seq,
  );
  await stack.kill('SIGKILL');
  await stack.startServer();

  assert.is((await stack.client.get(pactId)).status, 404, 'no pact yet: the acceptance waits out its grace');
  await stack.advanceClock(31_000); // the hook runs the reconciler
  const created = await stack.client.get(pactId);
  assert.is(created.status, 200, JSON.stringify(created.body));
  assert.equal(created.body.pact.sourceOffer, { id: offer.offerId, by: seller.party });
  assert.is(created.body.pact.createdBy, buyer.party);

  const retried = await stack.client.acceptOffer(buyer, offer.offerId, 'lost');
  assert.is(retried.status, 200, JSON.stringify(retried.body));
  assert.is(retried.body.pact.id, pactId);
  assert.is((await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'other')).status, 200);
  assert.is((await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'third')).status, 409);
  assert.is((await stack.client.list({ groupId: offer.offerId })).body.pacts.length, 2);
  const audit = await runAudit(stack.natsUrl, pactId);
  assert.is(audit.code, 0, audit.output);

  // Neither pact is funded: at their fund deadline both are cancelled and both units come back, the one
  // of the pact the reconciler created too.
  await stack.advanceClock(created.body.pact.fundBy - stack.now + 31_000);
  const reopened = (await stack.client.searchOffers({ by: seller.party })).body.offers;
  assert.equal(reopened.map((o) => [o.remaining, o.released, o.state]), [[2, 2, 'OPEN']]);
});

test('a forged acceptance in the offers journal makes no pact', async ({ stack, nc }) => {
  const seller = generateKeyPair();
  const buyer = generateKeyPair();
  const offer = (await stack.client.request('POST', '/offers', offerBy(seller, stack.now, { inventory: 2 }))).body.offer as Offer;
  const envelope = { ...signed({ action: 'offers.accept', call: { acceptanceId: 'forged' }, pactId: offer.offerId, stateNonce: 0, issuedAt: stack.now, signer: buyer.party }, generateKeyPair()) } as AcceptCall;
  const pactId = acceptedPactId(offer.offerId, buyer.party, 'forged');
  const journal = new OfferJournal(jetstream(nc), await jetstreamManager(nc));
  const [published] = await journal.entriesAfter(offer.offerId, 0);
  await journal.append({ offerId: offer.offerId, nonce: 1, event: { type: 'accepted', at: stack.now, signer: buyer.party, acceptanceId: 'forged', pactId }, envelope }, published!.seq);
  // Signed by the buyer, but after the offer expired: no pact either, whoever sends it.
  const late = signed({ action: 'offers.accept', call: { acceptanceId: 'late' }, pactId: offer.offerId, stateNonce: 0, issuedAt: offer.expiresAt + 11 * 60_000, signer: buyer.party }, buyer) as AcceptCall;
  const latePactId = acceptedPactId(offer.offerId, buyer.party, 'late');
  await journal.append({ offerId: offer.offerId, nonce: 2, event: { type: 'accepted', at: stack.now, signer: buyer.party, acceptanceId: 'late', pactId: latePactId }, envelope: late }, published!.seq + 1);
  await stack.advanceClock(31_000);
  await stack.advanceClock(1);
  assert.is((await stack.client.get(pactId)).status, 404, 'the pact host checks the accepter’s signature');
  assert.is((await stack.client.get(latePactId)).status, 404, 'the pact host checks the acceptance against the offer’s expiry');
});

test('a pact made by an acceptance the offer journal never took fails the audit', async ({ stack, nc }) => {
  // On a NATS without users anyone may send what only actor hosts may send with them: here, an `accepted`
  // command with both signatures, but no acceptance in the offer's journal (no unit taken).
  const seller = generateKeyPair();
  const buyer = generateKeyPair();
  const offer = (await stack.client.request('POST', '/offers', offerBy(seller, stack.now))).body.offer as Offer;
  const envelope = signed({ action: 'offers.accept', call: { acceptanceId: 'bypass' }, pactId: offer.offerId, stateNonce: 0, issuedAt: stack.now, signer: buyer.party }, buyer) as AcceptCall;
  const pactId = acceptedPactId(offer.offerId, buyer.party, 'bypass');
  const command = { id: randomUUID(), pactId, command: { type: 'accepted', offer: signedOfferOf(offer), envelope } };
  await jetstream(nc).publish(commandSubject(partitionOf(pactId, 8), 'accepted'), JSON.stringify(command), { msgID: command.id });
  for (let tries = 0; tries < 100 && (await stack.client.get(pactId)).status !== 200; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.is((await stack.client.get(pactId)).status, 200, 'the host made the pact: both signatures hold');
  const audit = await runAudit(stack.natsUrl, pactId);
  assert.is(audit.code, 1, audit.output);
  assert.match(audit.output, /records no acceptance that makes this pact/);
});

test.run();
