import { privateKeyToAccount } from 'viem/accounts';
import type { Nats } from '../../actors/nats.js';
import type { RailAddressBook } from '../address-book.js';
import type { Rail } from '../rail.js';
import type { MppConfig } from '../mpp/config.js';
import { MppRail } from '../mpp/mpp-rail.js';
import { X402Rail } from '../x402/x402-rail.js';
import { chainReader, plainChain } from './chain.js';
import type { EvmConfig } from './config.js';
import { eip3009TokenAbi } from './token-abi.js';
import { EscrowWallet } from './escrow-wallet.js';
import { EvmEscrow } from './evm-escrow.js';
import { WalletLog } from './wallet-log.js';

const HEALTH_EVERY_MS = 5_000;

export interface EvmRails {
  rails: Rail[];
  stop(): void;
}

export interface EvmRailSettings {
  evm: EvmConfig;
  /** mpp is offered when it is configured too. */
  mpp: MppConfig | undefined;
  nats: Pick<Nats, 'publisher' | 'jsm'>;
  addressBook: RailAddressBook;
  now: () => number;
}

/** The EVM rails on the configured chain (x402, and mpp when configured), sharing one escrow wallet whose log lives on NATS. */
export async function openEvmRails({ evm: config, mpp, nats, addressBook, now }: EvmRailSettings): Promise<EvmRails> {
  const account = privateKeyToAccount(config.escrowKey);
  const reader = chainReader(plainChain(config.chainId, config.rpcUrl), config.pollingIntervalMs);
  await checkDecimals(reader, config);
  const wallet = await EscrowWallet.open(account, reader, new WalletLog(nats.publisher, nats.jsm, account.address));
  const escrow = new EvmEscrow(config, wallet, reader, async (rail, party) => (await addressBook.addressOf(rail, party))?.address);
  await escrow.health(); // judged once before the first pact is asked for
  const watcher = setInterval(() => void escrow.health(), HEALTH_EVERY_MS).unref();
  return {
    rails: [
      new X402Rail(escrow, reader),
      ...(mpp ? [new MppRail(escrow, mpp, async (party, address, call) => void (await addressBook.bind({ rail: 'mpp', party, address, at: now(), call })))] : []),
    ],
    stop() {
      clearInterval(watcher);
      wallet.stop();
    },
  };
}

/**
 * The token's decimals as the chain says them must be the configured ones: amounts are minor units of the token, and
 * a checkout charges one per micro-USD. A mismatch stops the start (a chain that cannot say now lets it go on).
 */
async function checkDecimals(reader: ReturnType<typeof chainReader>, config: EvmConfig): Promise<void> {
  const onChain = await reader.readContract({ address: config.token.address, abi: eip3009TokenAbi, functionName: 'decimals' }).catch(() => undefined);
  if (onChain !== undefined && Number(onChain) !== config.token.decimals) {
    throw new Error(`PACT_X402_TOKEN_DECIMALS is ${config.token.decimals}, but the token at ${config.token.address} has ${onChain} decimals`);
  }
}
