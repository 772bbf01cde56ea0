import { createHash, randomBytes, randomInt } from 'node:crypto';
import bs58 from 'bs58';

// Ids and one-time secrets of the wallet service (WALLET-DECISIONS.md). Secrets are shown once and kept only
// as their SHA-256.

/** A wallet id as this service makes them: never a NATS wildcard or anything but one subject token. */
export const WALLET_ID = /^w_[1-9A-HJ-NP-Za-km-z]{20,40}$/;

/** `<prefix>_` and 24 random base58 characters (the spec asks for at least 20). */
export function newId(prefix: 'w' | 'pr' | 'co' | 'ex' | 'rc' | 'rsv' | 'tx' | 'le'): string {
  let text = '';
  while (text.length < 24) text += bs58.encode(randomBytes(24));
  return `${prefix}_${text.slice(0, 24)}`;
}

const base64url = (bytes: number) => randomBytes(bytes).toString('base64url');

export const newPairingToken = () => `wpt_${base64url(32)}`;
export const newAccessToken = () => `wk_${base64url(32)}`;

/** Letters and digits a person cannot confuse (no I, O, 0 or 1). */
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A human pairing code `XXXX-XXXX`. */
export function newPairingCode(): string {
  const char = () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return `${Array.from({ length: 4 }, char).join('')}-${Array.from({ length: 4 }, char).join('')}`;
}

/** A code as a person may type it: any case, with or without its dash, spaces around. */
export const normalisedCode = (code: string) => {
  const compact = code.trim().toUpperCase().replace(/-/g, '');
  return compact.length === 8 ? `${compact.slice(0, 4)}-${compact.slice(4)}` : compact;
};

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
