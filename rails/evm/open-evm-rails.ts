import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { privateKeyToAccount } from 'viem/accounts';
import type { RailAddressBook } from '../address-book.js';
import type { Rail } from '../rail.js';
import { X402Rail } from '../x402/x402-rail.js';
import { chainReader, plainChain } from './chain.js';
import type { EvmConfig } from './config.js';
import { EscrowWallet } from './escrow-wallet.js';
import { EvmEscrow } from './evm-escrow.js';
import { WalletLog } from './wallet-log.js';

const HEALTH_EVERY_MS = 5_000;

export interface EvmRails {
  rails: Rail[];
  stop(): void;
}

/** The EVM rails on the configured chain, sharing one escrow wallet whose log lives on NATS. */
export async function openEvmRails(config: EvmConfig, nats: { js: JetStreamClient; jsm: JetStreamManager }, addressBook: RailAddressBook): Promise<EvmRails> {
  const account = privateKeyToAccount(config.escrowKey);
  const reader = chainReader(plainChain(config.chainId, config.rpcUrl), config.pollingIntervalMs);
  const wallet = await EscrowWallet.open(account, reader, new WalletLog(nats.js, nats.jsm, account.address));
  const escrow = new EvmEscrow(config, wallet, reader, async (rail, party) => (await addressBook.addressOf(rail, party))?.address);
  await escrow.health(); // judged once before the first pact is asked for
  const watcher = setInterval(() => void escrow.health(), HEALTH_EVERY_MS).unref();
  return {
    rails: [new X402Rail(escrow, reader)],
    stop() {
      clearInterval(watcher);
      wallet.stop();
    },
  };
}
