// The SDK as the `pact-cli` package exports it (`import { PactClient } from 'pact-cli'`): it runs in Node and in browsers.
export { PactClient, MOCK_PROOF, isNonceConflict, PactRequestError } from './pact-client.js';
export type { CancelApproval, ErrorBody, Health, HttpResult, PactClientOptions, Progress, Requirement } from './pact-client.js';
export { generateKeyPair, keyPairFromSeed, keyPairFromSeedHex, signed, signPayload, type KeyPair } from '../protocol/sign.js';
export { VERSION } from '../protocol/version.js';
