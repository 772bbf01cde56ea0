import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createdPactId } from '../../actors/admission.js';
import { signedPart, type SignedCall } from '../../protocol/signed-call.js';
import { verifySignature } from '../../protocol/verify.js';
import { lifecycleRequests } from '../../bench/worker/presign.js';

const callsOf = () => lifecycleRequests().map((request) => JSON.parse(request.body!) as SignedCall);

test('the bench signs with node:crypto what the server verifies as an SDK signature', () => {
  for (const call of callsOf()) assert.ok(verifySignature(call.signer, signedPart(call), call.sig), call.action);
});

test('a pre-signed call changed after signing does not verify', () => {
  const [create] = callsOf();
  assert.not.ok(verifySignature(create!.signer, { ...signedPart(create!), stateNonce: 1 }, create!.sig));
});

test('the calls after the create name the pact the create will make, at the nonces a lifecycle goes through', () => {
  const [create, ...rest] = callsOf();
  const id = createdPactId(create!);
  assert.equal(rest.map((call) => [call.pactId, call.stateNonce]), [[id, 0], [id, 0], [id, 1], [id, 1], [id, 2], [id, 3]]);
});

test.run();
