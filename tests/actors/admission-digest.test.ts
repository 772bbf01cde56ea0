import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { admitNow, createdPactId } from '../../actors/admission.js';
import type { SignedCall } from '../../protocol/signed-call.js';
import { lifecycleRequests } from '../../bench/worker/presign.js';

/** A signed create, as the gateway has it once parsed. */
const signedCreate = () => JSON.parse(lifecycleRequests()[0]!.body!) as SignedCall<{ terms: { spec: string } }>;

const admitted = (pactId: string, envelope: SignedCall) => {
  const admission = admitNow(pactId, { type: 'signed', envelope }, 'signed', undefined);
  return 'error' in admission ? admission.error.error : admission.command.type;
};

test('a create the gateway named is admitted over the digest it was named with', () => {
  const call = signedCreate();
  assert.is(admitted(createdPactId(call), call), 'create');
});

test('the named digest serves one admission: the same call object changed after it is digested again and refused', () => {
  const call = signedCreate();
  const id = createdPactId(call);
  assert.is(admitted(id, call), 'create');
  call.call.terms = { spec: 'changed after the gateway named the pact' };
  assert.is(admitted(id, call), 'invalid_signature');
});

test('a copy of a named create (a call that came over NATS) is digested on its own', () => {
  const call = signedCreate();
  const id = createdPactId(call);
  const copy = structuredClone(call);
  copy.call.terms = { spec: 'changed in the copy' };
  assert.is(admitted(id, copy), 'invalid_signature');
  assert.is(admitted(id, call), 'create');
});

test.run();
