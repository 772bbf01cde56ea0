import type { Nats } from '../../actors/nats.js';
import type { Pact } from '../../machines/pact/types.js';
import type { KeyPair } from '../../protocol/sign.js';
import type { RailAddressBook } from '../address-book.js';
import { CreditHolds } from './credit-holds.js';
import { CreditRail } from './credit-rail.js';
import { ensureFeeWallet } from './fee-wallet.js';
import { WalletClient, type WalletEndpoint } from './wallet-client.js';

const HEALTH_EVERY_MS = 5_000;
const FEE_WALLET_RETRY_MS = 5_000;

export interface CreditRailSettings {
  wallet: WalletEndpoint;
  /** The server's party, paid arbitration fees, and where its fee wallet's token is kept. */
  serverKey: KeyPair;
  feeTokenFile: string;
  nats: Pick<Nats, 'publisher' | 'jsm'>;
  addressBook: RailAddressBook;
  pactOf(pactId: string): Promise<Pact | undefined>;
  now(): number;
}

/**
 * The credit rail on a wallet service, with the client the gateway asks whose a wallet is, its health watch, and
 * the binding of the server's fee wallet (`start`, once the wallet service listens).
 */
export function openCreditRail({ wallet, serverKey, feeTokenFile, nats, addressBook, pactOf, now }: CreditRailSettings) {
  const client = new WalletClient(wallet);
  const rail = new CreditRail({
    wallet: client,
    holds: new CreditHolds(nats.publisher, nats.jsm),
    walletOf: async (party) => (await addressBook.addressOf('credit', party))?.address,
    pactOf,
    now,
  });
  const watcher = setInterval(() => void rail.health(), HEALTH_EVERY_MS).unref();
  let retry: NodeJS.Timeout | undefined;
  /** Once the wallet service answers: binds the fee wallet (retrying), and only then is the rail ready. Resolves after the first try. */
  const bindFeeWallet = (): Promise<void> =>
    ensureFeeWallet({ wallet, serverKey, addressBook, tokenFile: feeTokenFile, now }).then(
      () => rail.feePayeeBound(),
      (error: unknown) => {
        console.error(`binding the arbitration fee wallet failed; the credit rail waits, trying again in ${FEE_WALLET_RETRY_MS / 1000} s:`, String(error));
        retry = setTimeout(() => void bindFeeWallet(), FEE_WALLET_RETRY_MS).unref();
      },
    );
  return {
    rail,
    wallets: client,
    start: bindFeeWallet,
    stop() {
      clearInterval(watcher);
      clearTimeout(retry);
    },
  };
}
