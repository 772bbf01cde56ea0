import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiscardPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connectClient, type Nats } from '../../actors/nats.js';
import { WALLET_STREAM, WALLET_TXS } from '../../actors/subjects.js';
import { chainReader, plainChain, type ChainReader } from '../../rails/evm/chain.js';
import { EscrowWallet } from '../../rails/evm/escrow-wallet.js';
import { WalletLog } from '../../rails/evm/wallet-log.js';
import { startNatsServer, type NatsServerProcess } from '../../runtime/nats-server.js';
import { startEvmChain, type EvmChain } from './evm-chain.js';
import { forget, reapOnExit } from './reaper.js';

/** A private nats-server with the escrow wallet's log and a local chain (no payers): what escrow wallet tests run on. */
export interface EscrowBench {
  server: NatsServerProcess;
  nats: Nats;
  chain: EvmChain;
  reader(): ChainReader;
  /** An escrow wallet of the chain's escrow key on the shared log, as one node opens it; stopped with the bench. */
  openWallet(): Promise<EscrowWallet>;
  stop(): Promise<void>;
}

export async function startEscrowBench(name: string): Promise<EscrowBench> {
  const root = mkdtempSync(join(tmpdir(), `pact-${name}-`));
  const server = await startNatsServer(join(root, 'nats'));
  reapOnExit(server.pid);
  const removeAll = async () => {
    await server.stop();
    forget(server.pid);
    rmSync(root, { recursive: true, force: true });
  };
  const nats = await connectClient(server.url, undefined, 'host').catch(async (error: unknown) => {
    await removeAll();
    throw error;
  });
  let chain: EvmChain;
  try {
    await nats.jsm.streams.add({ name: WALLET_STREAM, subjects: [WALLET_TXS], retention: RetentionPolicy.Limits, storage: StorageType.File, discard: DiscardPolicy.New });
    chain = await startEvmChain({ payers: 0 });
  } catch (error) {
    await nats.nc.close(); // what did start is not left behind
    await removeAll();
    throw error;
  }
  const wallets: EscrowWallet[] = [];
  const reader = () => chainReader(plainChain(chain.chainId, chain.rpcUrl), 20);
  return {
    server, nats, chain, reader,
    async openWallet() {
      const wallet = await EscrowWallet.open(chain.escrow.account, reader(), new WalletLog(nats.publisher, nats.jsm, chain.escrow.address));
      wallets.push(wallet);
      return wallet;
    },
    async stop() {
      for (const wallet of wallets) wallet.stop();
      await chain.stop();
      await nats.nc.close();
      await removeAll();
    },
  };
}
