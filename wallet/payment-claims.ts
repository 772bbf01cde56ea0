import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from '../actors/acked-publisher.js';
import { ExpectedSequenceMismatch, messageObject, StreamJournal } from '../actors/stream-journal.js';
import { WALLET_PAYMENTS_STREAM, walletPaymentSubject } from '../actors/subjects.js';
import { sha256Hex } from './secrets.js';

/** Which execution a payment authorization (its payer and nonce) was signed for. */
interface PaymentClaim {
  id: string;
  walletId: string;
  executionId: string;
}

function decodeClaim(data: Uint8Array, subject: string): PaymentClaim | undefined {
  const value = messageObject<PaymentClaim>(data);
  const wellShaped = value !== undefined && typeof value.id === 'string' && typeof value.executionId === 'string' && walletPaymentSubject(value.id) === subject;
  return wellShaped ? (value as PaymentClaim) : undefined;
}

/**
 * Each (payer, nonce) the service's payer signs, claimed for one execution in the whole deployment
 * (`PACT_WALLET_PAYMENTS`, a subject per claim, first write wins, kept a week): an mpp nonce is the hash of the
 * provider's challenge, so a provider handing out one challenge twice would otherwise have two executions sign the
 * same authorization, and the chain show it "taken" for both.
 */
export class PaymentClaims extends StreamJournal<PaymentClaim> {
  constructor(publisher: Publisher, manager: JetStreamManager) {
    super(publisher, manager, { stream: WALLET_PAYMENTS_STREAM, subjectOf: walletPaymentSubject, idOf: (claim) => claim.id, messageIdOf: (claim) => walletPaymentSubject(claim.id), decode: decodeClaim });
  }

  /** Claims the payer's nonce for an execution; false when it was claimed before. */
  async claim(from: string, nonce: string, walletId: string, executionId: string): Promise<boolean> {
    try {
      await this.append({ id: sha256Hex(`${from.toLowerCase()}:${nonce.toLowerCase()}`), walletId, executionId }, 0);
      return true;
    } catch (error) {
      if (error instanceof ExpectedSequenceMismatch) return false;
      throw error;
    }
  }
}
