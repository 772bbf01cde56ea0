import { canonicalDigest } from './digest.js';
import type { Signer } from './node-signer.js';
import type { Check, Verifier } from './verify-pool.js';
import { BoundedMap } from '../storage/bounded-map.js';

/** Signatures made and not yet checked back; they come back within moments (the node's own notifications). */
const REMEMBERED = 4_096;

/**
 * Signatures this process made with its own key, remembered until they are checked once, so that the check
 * costs no Ed25519 verification. Ed25519 is deterministic: the same key over the same digest gives these very
 * bytes, so a check that matches one exactly (signer, digest and signature) is one the verifier would pass;
 * anything else, or the same check a second time, goes to the verifier.
 */
export class OwnSignatures {
  private readonly made = new BoundedMap<string, true>(REMEMBERED);

  constructor(private readonly party: string) {}

  /** `signer` (this process's key), remembering what it signs. */
  signing(signer: Signer): Signer {
    if (signer.party !== this.party) throw new Error('OwnSignatures remembers the signatures of its own party only');
    return {
      party: signer.party,
      sign: (payload) => {
        const sig = signer.sign(payload);
        this.made.set(keyOf(canonicalDigest(payload), sig), true);
        return sig;
      },
    };
  }

  /** `verifier`, but for a check of a signature remembered here. Closing it leaves `verifier` open. */
  checking(verifier: Verifier): Verifier {
    return {
      verify: async (check: Check) => (check.signer === this.party && this.made.delete(keyOf(check.digest, check.sig))) || verifier.verify(check),
      close: async () => undefined,
    };
  }
}

const keyOf = (digest: Uint8Array, sig: string) => `${Buffer.from(digest).toString('hex')}:${sig}`;
