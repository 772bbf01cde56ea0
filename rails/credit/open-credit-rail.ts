import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { Pact } from '../../machines/pact/types.js';
import type { RailAddressBook } from '../address-book.js';
import { CreditHolds } from './credit-holds.js';
import { CreditRail } from './credit-rail.js';
import { WalletClient, type WalletEndpoint } from './wallet-client.js';

const HEALTH_EVERY_MS = 5_000;

export interface CreditRailSettings {
  wallet: WalletEndpoint;
  nats: { js: JetStreamClient; jsm: JetStreamManager };
  addressBook: RailAddressBook;
  pactOf(pactId: string): Promise<Pact | undefined>;
  now(): number;
}

/** The credit rail on a wallet service, with the client the gateway asks whose a wallet is, and its health watch. */
export function openCreditRail({ wallet, nats, addressBook, pactOf, now }: CreditRailSettings) {
  const client = new WalletClient(wallet);
  const rail = new CreditRail({
    wallet: client,
    holds: new CreditHolds(nats.js, nats.jsm),
    walletOf: async (party) => (await addressBook.addressOf('credit', party))?.address,
    pactOf,
    now,
  });
  const watcher = setInterval(() => void rail.health(), HEALTH_EVERY_MS).unref();
  return { rail, wallets: client, stop: () => clearInterval(watcher) };
}
