import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg, totalmem } from 'node:os';
import { canonicalDigest } from '../protocol/digest.js';
import { generateKeyPair, signed } from '../protocol/sign.js';
import { signedPart } from '../protocol/signed-call.js';
import { verifySignature } from '../protocol/verify.js';
import { findNatsServer } from '../runtime/nats-server.js';
import { fixed } from './stats.js';

export function machineDescription(): string[] {
  const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  const run = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8' }).trim();
  const nats = findNatsServer();
  return [
    `cpu            ${cpu}`,
    `nproc          ${run('nproc', [])}`,
    `memory         ${fixed(totalmem() / 2 ** 30)} GiB`,
    `node           ${process.version}`,
    `nats-server    ${nats ? run(nats, ['--version']) : 'not found'}`,
    `load average   ${loadavg().map((n) => fixed(n, 2)).join(' ')} (before the run; other work on the machine skews the figures)`,
  ];
}

function ratePerSecond(durationMs: number, op: () => boolean): number {
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < durationMs) {
    for (let i = 0; i < 100; i++) if (op()) count++;
    elapsed = performance.now() - start;
  }
  return (count / elapsed) * 1000;
}

/** node:crypto verify of a 32-byte digest with a cached KeyObject, on this one core: the server's per-call primitive. */
export function rawVerifyRate(): number {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const digest = canonicalDigest({ bench: 'verify' });
  const sig = sign(null, digest, privateKey);
  return ratePerSecond(2000, () => verify(null, digest, publicKey, sig));
}

/** The server's full check of one signed call (protocol/verify.ts): JCS + SHA-256 + verify. */
export function signedCallVerifyRate(): number {
  const key = generateKeyPair();
  const call = signed({ action: 'pacts.cosign', call: {}, pactId: `p_${'0'.repeat(32)}`, stateNonce: 3, issuedAt: Date.now(), signer: key.party }, key);
  return ratePerSecond(1000, () => verifySignature(call.signer, signedPart(call), call.sig));
}
