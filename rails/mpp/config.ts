import { readFileSync } from 'node:fs';

/** The Payment authentication scheme's server settings: who issues challenges, and the key that binds them. */
export interface MppConfig {
  /** The HMAC key that makes challenges tamper-evident (at least 32 bytes), read from PACT_MPP_SECRET_FILE. */
  secretKey: string;
  /** PACT_MPP_REALM: the protection space named in challenges (default `pact`). */
  realm: string;
  /** PACT_MPP_METHOD: the payment method. `evm` (EIP-3009 authorizations) is the one built; Tempo would be another. */
  method: 'evm';
  /** How long a challenge may be answered. */
  challengeTtlMs: number;
}

const METHODS = ['evm'] as const;

/** The mpp settings, or undefined when PACT_MPP_SECRET_FILE is unset (then mpp is not offered). */
export function mppConfig(env: NodeJS.ProcessEnv): MppConfig | undefined {
  const secretFile = env.PACT_MPP_SECRET_FILE;
  if (!secretFile) return undefined;
  if (!env.PACT_X402_RPC_URL) throw new Error('PACT_MPP_SECRET_FILE needs the chain: set PACT_X402_RPC_URL and the rest (README, Rails)');
  const secretKey = readFileSync(secretFile, 'utf8').trim();
  if (Buffer.byteLength(secretKey) < 32) throw new Error(`${secretFile} must hold a secret of at least 32 bytes`);
  const method = env.PACT_MPP_METHOD || 'evm';
  if (!(METHODS as readonly string[]).includes(method)) throw new Error(`PACT_MPP_METHOD ${method} is not built; this server offers ${METHODS.join(', ')}`);
  return { secretKey, realm: env.PACT_MPP_REALM || 'pact', method: method as MppConfig['method'], challengeTtlMs: 5 * 60_000 };
}
