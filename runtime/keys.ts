import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { keyPairFromSeedHex, type KeyPair } from '../protocol/sign.js';

/** A key kept as its 32-byte seed in 64 hex characters; created once (mode 0600) when the file is missing. */
export function loadOrCreateKey(file: string): KeyPair {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  }
  return keyPairFromSeedHex(readFileSync(file, 'utf8'));
}

/** A key that must exist already (PACT_EVALUATOR_KEY_FILE): a clear error rather than a silent new key. */
export function loadKey(file: string): KeyPair {
  if (!existsSync(file)) throw new Error(`key file ${file} does not exist`);
  return keyPairFromSeedHex(readFileSync(file, 'utf8'));
}
