// A minimal signer for walking through the API with curl:
//   tsx client/sign-cli.ts keygen                                   → {"seed": "...", "party": "ed25519:..."}
//   tsx client/sign-cli.ts call <seed> <action> <pactId> <stateNonce> '<call JSON>'   → a SignedCall
//   tsx client/sign-cli.ts approve-cancel <seed> <pactId> <stateNonce> <expiresAt>   → {"signer", "sig"}
//   tsx client/sign-cli.ts verdict <seed> '<verdict JSON without signer and sig>'    → a signed verdict
//   tsx client/sign-cli.ts put-headers <seed> <pactId> <file>   → the signed headers of a blob upload (curl -H @-)
//   tsx client/sign-cli.ts link <seed> <pactId> <hash>          → the signed body of a link request
//   tsx client/sign-cli.ts offer <seed> '<offer JSON without by and sig>'   → a signed offer for POST /offers
// The seed is a secret: this is for local development on the mock rail only.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { bytesToHex } from '@noble/hashes/utils.js';
import { generateKeyPair, keyPairFromSeedHex, signed, signPayload } from '../protocol/sign.js';
import type { Action } from '../protocol/signed-call.js';

const [command, ...args] = process.argv.slice(2);
const print = (value: unknown) => console.log(JSON.stringify(value));

switch (command) {
  case 'keygen': {
    const key = generateKeyPair();
    print({ seed: bytesToHex(key.secretKey), party: key.party });
    break;
  }
  case 'call': {
    const [seed, action, pactId, stateNonce, call] = args;
    const key = keyPairFromSeedHex(seed!);
    print(signed({ action: action as Action, call: JSON.parse(call ?? '{}'), pactId: pactId ?? '', stateNonce: Number(stateNonce ?? 0), issuedAt: Date.now(), signer: key.party }, key));
    break;
  }
  case 'approve-cancel': {
    const [seed, pactId, stateNonce, expiresAt] = args;
    const key = keyPairFromSeedHex(seed!);
    print({ signer: key.party, sig: signPayload({ action: 'cancel', pactId, stateNonce: Number(stateNonce), expiresAt: Number(expiresAt) }, key) });
    break;
  }
  case 'verdict': {
    const [seed, body] = args;
    const key = keyPairFromSeedHex(seed!);
    print(signed({ ...JSON.parse(body!), issuedAt: Date.now(), signer: key.party }, key));
    break;
  }
  case 'put-headers': {
    const [seed, pactId, file] = args;
    const key = keyPairFromSeedHex(seed!);
    const sha256 = createHash('sha256').update(readFileSync(file!)).digest('hex');
    const issuedAt = Date.now();
    const signature = signPayload({ action: 'put', pactId, sha256, issuedAt }, key);
    console.log([`x-pact-signer: ${key.party}`, `x-pact-issued-at: ${issuedAt}`, `x-pact-signature: ${signature}`, `x-pact-sha256: ${sha256}`].join('\n'));
    break;
  }
  case 'link': {
    const [seed, pactId, hash] = args;
    const key = keyPairFromSeedHex(seed!);
    const issuedAt = Date.now();
    print({ signer: key.party, issuedAt, sig: signPayload({ action: 'link', pactId, hash, issuedAt }, key) });
    break;
  }
  case 'offer': {
    const [seed, body] = args;
    const key = keyPairFromSeedHex(seed!);
    print(signed({ by: key.party, ...JSON.parse(body!) }, key));
    break;
  }
  default:
    console.error('usage: sign-cli.ts keygen | call <seed> <action> <pactId> <stateNonce> <call> | approve-cancel <seed> <pactId> <nonce> <expiresAt> | verdict <seed> <body> | put-headers <seed> <pactId> <file> | link <seed> <pactId> <hash> | offer <seed> <body>');
    process.exit(2);
}
