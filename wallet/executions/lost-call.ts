import type { WalletEvent } from '../../machines/wallet/events.js';
import type { Execution } from '../../machines/wallet/types.js';

/**
 * A paid call with no usable answer and no payment taken yet: ambiguous, held, and reconciled once its
 * authorization lapses (the chain then says taken or void for good).
 */
export function lostCall(execution: Execution, at: number, reason: string): WalletEvent {
  const lapsesAt = execution.authorization ? execution.authorization.validBefore * 1000 : at;
  return { type: 'executionAmbiguous', at, executionId: execution.id, reason, reconcileAt: Math.max(at, lapsesAt) };
}
