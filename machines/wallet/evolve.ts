import { nextSnapshot } from '../next-snapshot.js';
import type { WalletEvent } from './events.js';
import { walletMachine } from './machine.js';
import type { Wallet } from './types.js';

/** The wallet after `event`, or undefined when the machine refuses it. A wallet's first event creates it. */
export function evolve(wallet: Wallet | undefined, event: WalletEvent): Wallet | undefined {
  if (event.type === 'created') return wallet ? undefined : event.wallet;
  if (!wallet) return undefined;
  const next = nextSnapshot(walletMachine, walletMachine.resolveState({ value: wallet.status, context: wallet }), event);
  return next.context.version === wallet.version ? undefined : { ...next.context, status: next.value as Wallet['status'] };
}
