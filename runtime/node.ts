import { RailAddressBook } from '../rails/address-book.js';
import { startInspection } from './inspection.js';
import { closerOf } from './close-app.js';
import { journalFeed } from '../projection/pact-journal-feed.js';
import { VERSION } from '../protocol/version.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CommandBus } from '../actors/command-bus.js';
import { LocalFirstSender } from '../actors/command-sender.js';
import { ActorHost } from '../actors/host.js';
import { Journal } from '../actors/journal.js';
import { Keeper } from '../actors/keeper.js';
import { connectionsOf, connectRoles, journalCreated } from '../actors/nats.js';
import { PayoutWorker } from '../actors/payout-worker.js';
import type { ActorRecords } from '../actors/pact-actor.js';
import { partitionOf } from '../actors/subjects.js';
import { Reconciler } from '../actors/reconciler.js';
import { AcceptanceReconciler } from '../actors/acceptance-reconciler.js';
import { OfferDesk } from '../actors/offer-desk.js';
import { OfferJournal } from '../actors/offer-journal.js';
import { OfferWatchers } from '../gateway/offer-watchers.js';
import { OfferProjector } from '../projection/offer-projector.js';
import { OfferReadModel } from '../projection/offer-read-model.js';
import { EventProjector } from '../stream/event-projector.js';
import { EventStore } from '../stream/event-store.js';
import { PactNotifier } from '../stream/pact-notifier.js';
import { NotifiedParties } from '../stream/notified-parties.js';
import { storeEvent } from '../stream/store-event.js';
import type { Pact } from '../machines/pact/types.js';
import type { JsonLevel } from '../storage/level.js';
import type { RoleConnections } from '../actors/nats.js';
import type { Clock } from './clock.js';
import { LinkTokens } from '../blobs/link-tokens.js';
import { LocalBlobStore } from '../blobs/local-blob-store.js';
import { PactBlobs } from '../blobs/pact-blobs.js';
import { UploadRoom } from '../blobs/upload-room.js';
import { buildGateway } from '../gateway/app.js';
import { INTERNAL_HEADER } from '../gateway/rate-limits.js';
import type { ServerPolicy } from '../machines/pact/spec.js';
import { Projector } from '../projection/projector.js';
import { inlineVerifier, VerifyPool } from '../protocol/verify-pool.js';
import { ReadModel } from '../projection/read-model.js';
import { MockRail } from '../rails/mock/mock-rail.js';
import type { EvmRails } from '../rails/evm/open-evm-rails.js';
import { startWalletService } from '../wallet/service.js';
import type { ProviderPayer } from '../wallet/executions/provider-payer.js';
import { openCreditRail } from '../rails/credit/open-credit-rail.js';
import type { Rail } from '../rails/rail.js';
import { openLevel } from '../storage/level.js';
import { ManualOffsetClock } from './clock.js';
import type { Config } from './config.js';
import { loadKey, loadOrCreateKey } from './keys.js';
import type { KeyPair } from '../protocol/sign.js';
import { nodeSigner, signingHere } from '../protocol/node-signer.js';
import { judgeOf } from '../evaluator/judge-of.js';
import { EvaluatorRole } from '../evaluator/role.js';
import { ServiceClient } from '../evaluator/service-client.js';
import { admitJournal, adoptJournal } from './journal-identity.js';
import { natsEndpoint, type NatsEndpoint } from './nats-endpoint.js';
import { AccessDesk } from '../access/desk.js';
import { inviteGate, openGate, type AccessGate } from '../access/gate.js';
import { smtpMailer, type Mailer } from '../access/mailer.js';
import { pendingParties } from '../access/pending.js';
import { AccessJournal } from '../actors/access-journal.js';


/**
 * The rails a checkout is paid with: the mock (a page's form, development), x402 and mpp (a program answers the 402).
 * Credit cannot top itself up.
 */
const CHECKOUT_RAILS = ['mock', 'x402', 'mpp'];
/** Credit is micro-USD, charged one token unit per micro-USD: only a USD stablecoin with 6 decimals may pay it. */
const USD_STABLECOINS = ['USDC', 'USDT', 'PYUSD', 'USDG'];
function checkoutRails(names: string[], rails: ReadonlyMap<string, Rail>, evm: Config['evm']): ReadonlyMap<string, Rail> {
  for (const name of names) {
    if (!CHECKOUT_RAILS.includes(name)) throw new Error(`WALLET_CHECKOUT_RAILS: a checkout cannot be paid with ${name} (only ${CHECKOUT_RAILS.join(', ')})`);
    if (!rails.has(name)) throw new Error(`WALLET_CHECKOUT_RAILS names ${name}, which this server does not offer (configure it first)`);
    if (name !== 'mock' && !(evm && evm.token.decimals === 6 && USD_STABLECOINS.includes(evm.token.asset))) {
      throw new Error(`WALLET_CHECKOUT_RAILS: ${name} checkouts need a USD stablecoin with 6 decimals (${USD_STABLECOINS.join(', ')}), not ${evm?.token.asset} with ${evm?.token.decimals}; set WALLET_CHECKOUT_RAILS without ${name}`);
    }
  }
  return new Map(names.map((name) => [name, rails.get(name)!]));
}

export interface PactNode {
  url: string;
  /** The credit wallet service's address (its own port). */
  walletUrl: string;
  /** Which NATS the node uses, and whether it is private. */
  nats: string;
  close(): Promise<void>;
}

/** Names this node in leases and consumer names; kept in the data directory across restarts. */
function stableNodeId(dataDir: string): string {
  const file = join(dataDir, 'host-id');
  if (!existsSync(file)) writeFileSync(file, randomUUID());
  return readFileSync(file, 'utf8').trim();
}

/**
 * What the server pins into every pact: the evaluator's key (PACT_EVALUATOR_KEY_FILE, or one generated once
 * under the data directory) and the server's own party (PACT_SERVER_KEY_FILE, or likewise generated), which
 * receives arbitration fees and signs the stream's notifications.
 */
function serverPolicy(config: Config): { policy: ServerPolicy; serverKey: KeyPair; evaluatorKey: KeyPair } {
  const settings = config.evaluator;
  const evaluatorKey = settings.keyFile ? loadKey(settings.keyFile) : loadOrCreateKey(join(config.dataDir, 'keys', 'evaluator.seed'));
  const serverKey = config.serverKeyFile ? loadKey(config.serverKeyFile) : loadOrCreateKey(join(config.dataDir, 'keys', 'server.seed'));
  const serverParty = serverKey.party;
  const evaluator = {
    pubkey: evaluatorKey.party,
    promptVersion: settings.promptVersion,
    model: settings.model,
    timeoutMs: settings.timeoutMs,
    onFailure: 'refund' as const,
  };
  return { policy: { evaluator, arbitrationFeeRecipient: serverParty }, serverKey, evaluatorKey };
}

/** How this node reaches itself over HTTP. */
function selfUrl(listening: string, address: AddressInfo): string {
  const host = listening === '0.0.0.0' || listening === '::' ? '127.0.0.1' : listening;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/**
 * Access on this node: the desk that mails and checks codes and takes the operator's calls, and the gate
 * every signed write passes. Both read the access journal itself, so a revoke holds on the next write on
 * every node. Open mode has no mailer and a gate that lets everyone through.
 */
function startAccess(config: Config, nats: RoleConnections, clock: Clock, serverName: () => string) {
  const { mode, smtpUrl, mailFrom, adminParty, requestsPerIpPerHour } = config.access;
  const journal = new AccessJournal(nats.host.publisher, nats.host.jsm);
  const mailer: Mailer = smtpUrl ? smtpMailer(smtpUrl, mailFrom) : { send: () => Promise.reject(new Error('no PACT_SMTP_URL')) };
  const desk = new AccessDesk({ journal, pending: () => pendingParties(nats.host.jsm), mailer, clock, serverName });
  const gate = mode === 'invite' ? inviteGate(async (party) => (await journal.viewOf(party)).status) : openGate;
  return { desk, gate, adminParty, requestsPerIpPerHour };
}

/**
 * The offers registry of this node: its desk (the offers' writer here), read model and projector, the
 * watchers its projector wakes, the reconciler of unfinished acceptances and the sweep of expired offers.
 */
function startOffers(
  config: Config,
  parts: { nats: RoleConnections; level: JsonLevel; nodeId: string; host: ActorHost; clock: Clock; rails: ReadonlyMap<string, Rail>; pactOf: (pactId: string) => Promise<Pact | undefined>; gate: AccessGate },
) {
  const { nats, level, nodeId, host, clock } = parts;
  const readModel = new OfferReadModel(level);
  const projector = new OfferProjector(nats.reader, readModel, nodeId);
  // An accepted offer's pact goes to its host as an actor host sends it: NATS lets only hosts send `accepted`.
  const hostBus = new CommandBus(nats.host, config.partitions, config.commandTimeoutMs);
  const desk = new OfferDesk({
    journal: new OfferJournal(nats.host.publisher, nats.host.jsm),
    records: readModel,
    pact: parts.pactOf,
    rails: new Set(parts.rails.keys()),
    sender: new LocalFirstSender(host, hostBus, config.partitions, config.commandTimeoutMs),
    clock,
    maxActors: config.maxActors,
    gate: parts.gate,
  });
  const watchers = new OfferWatchers((filter) => readModel.search(filter), clock, config.offerWatchers);
  projector.onListed((offer) => watchers.notice(offer));
  const acceptances = new AcceptanceReconciler(readModel, parts.pactOf, desk, clock);
  const sweep = () => void readModel.sweepExpired(clock.now()).catch((error) => console.error('sweeping expired offers failed:', error));
  sweep();
  const sweeper = setInterval(sweep, 60_000).unref();
  return {
    desk, readModel, projector, watchers, acceptances,
    async stop() {
      clearInterval(sweeper);
      acceptances.stop();
      await projector.stop();
      hostBus.close();
    },
  };
}

/** Every role in one process: gateway, actor host, projector, keeper, payout worker, offers. */
export async function startPactNode(config: Config): Promise<PactNode> {
  mkdirSync(config.dataDir, { recursive: true });
  const natsServer = await natsEndpoint(config);
  try {
    return await startRoles(config, natsServer);
  } catch (error) {
    await natsServer.stop?.(); // a private server must not outlive a start that failed
    throw error;
  }
}

async function startRoles(config: Config, natsServer: NatsEndpoint): Promise<PactNode> {
  const clock = new ManualOffsetClock(config.testHooks ? join(config.dataDir, 'clock-offset') : undefined);
  const { policy, serverKey, evaluatorKey } = serverPolicy(config);
  const serverParty = serverKey.party;
  const judge = judgeOf(config.evaluator); // before anything starts: a bad model setting stops the start

  const level = await openLevel(join(config.dataDir, 'leveldb'), { writeBufferBytes: config.levelWriteBufferBytes });
  const nats = await connectRoles({
    url: natsServer.url,
    replicas: config.replicas,
    journalMaxBytes: config.journalMaxBytes,
    credentials: natsServer.credentials,
    admitJournal: (created) => admitJournal(level, created, natsServer.description),
  });
  await adoptJournal(level, (await journalCreated(nats.host.jsm))!);
  const mockLevel = await openLevel(join(config.dataDir, 'mock-rail'));
  const mockRail = await MockRail.open(mockLevel, config.mockDefaultBalance);
  const addressBook = new RailAddressBook(nats.host.publisher, nats.host.jsm);
  const evmRails = await evmRailsOf(config, nats.host, addressBook, clock);
  // The credit rail reserves on this process's wallet service (its URL is known once it listens), or on PACT_CREDIT_WALLET_URL's.
  const creditToken = randomBytes(32).toString('hex');
  let walletHere = '';
  const credit = openCreditRail({
    wallet: config.creditWalletUrl ? { url: () => config.creditWalletUrl!, internalToken: config.walletInternalToken! } : { url: () => walletHere, internalToken: creditToken },
    serverKey,
    feeTokenFile: join(config.dataDir, 'keys', 'fee-wallet.token'),
    nats: nats.host,
    addressBook,
    pactOf: (pactId) => readModel.get(pactId),
    now: () => clock.now(),
  });
  const rails = new Map<string, Rail>([['mock', mockRail], ['credit', credit.rail], ...(evmRails?.rails ?? []).map((rail) => [rail.name, rail] as const)]);

  // Blob bookkeeping is not rebuildable from the journal, so it has a LevelDB of its own (like the mock rail).
  const blobLevel = await openLevel(join(config.dataDir, 'blobs', 'index'));
  const linkTokens = new LinkTokens(blobLevel);
  const blobStore = await LocalBlobStore.open(join(config.dataDir, 'blobs'), linkTokens);
  const room = new UploadRoom(join(config.dataDir, 'blobs'), config.blobs);
  const blobs = { store: blobStore, local: blobStore, uploads: new PactBlobs(blobLevel), limits: config.blobs, room };
  const sweepLinks = () => void linkTokens.sweep(clock.now()).catch((error) => console.error('sweeping link tokens failed:', error));
  sweepLinks();
  const linkSweeper = setInterval(sweepLinks, 3_600_000).unref();

  const nodeId = stableNodeId(config.dataDir);
  const readModel = new ReadModel(level, config.readCacheBytes);
  await readModel.open();
  const projector = new Projector(nats.reader, readModel, nodeId);
  const journal = new Journal(nats.host.publisher, nats.host.jsm);
  const partitionOfPact = (pactId: string) => partitionOf(pactId, config.partitions);
  const inspect = config.inspect ? await startInspection() : undefined;
  const records: ActorRecords = {
    load: (pactId) => readModel.record(pactId),
    current: (pactId) => projector.vouchesFor(pactId, host.heldSince(partitionOfPact(pactId))),
    committed: (committed) => {
      projector.committed(committed);
      inspect?.(committed);
    },
    recovered: (record) => projector.recovered(record),
  };
  const pool = config.verifyThreads > 0 ? new VerifyPool(config.verifyThreads, serverKey) : undefined;
  const verifier = pool ?? inlineVerifier;
  const access = startAccess(config, nats, clock, () => config.publicUrl ?? selfAddress());
  const host = new ActorHost(nats.host, { journal, records, rails, policy }, clock, {
    hostId: nodeId,
    partitions: config.partitions,
    idleMs: config.actorIdleMs,
    maxActors: config.maxActors,
  }, verifier, access.gate);
  const remoteBus = new CommandBus(nats.gateway, config.partitions, config.commandTimeoutMs);
  const bus = new LocalFirstSender(host, remoteBus, config.partitions, config.commandTimeoutMs);
  const keeper = new Keeper(bus, clock, {
    // what this node has answered is in the index first, so a poked pact is not poked again
    dueBy: async (time, limit) => {
      await projector.allWritten(1_000);
      return readModel.dueBy(time, limit);
    },
    earliest: () => readModel.earliestDeadline(),
  });
  const payoutBus = new CommandBus(nats.payouts, config.partitions, config.commandTimeoutMs);
  const payoutSender = new LocalFirstSender(host, payoutBus, config.partitions, config.commandTimeoutMs);
  const payoutWorker = new PayoutWorker(rails, payoutSender, {
    pact: (pactId) => readModel.get(pactId),
    withUnpaidPayouts: () => readModel.withUnpaidPayouts(),
    mine: (pactId) => host.holds(partitionOfPact(pactId)),
  });
  projector.onEntry((pact) => {
    keeper.track(pact);
    payoutWorker.notice(pact);
  });
  const offers = startOffers(config, { nats, level, nodeId, host, clock, rails, pactOf: (pactId) => readModel.get(pactId), gate: access.gate });
  // The read models catch up before the host takes partitions: actors come back from their records.
  await projector.start();
  await offers.projector.start();
  const eventStore = new EventStore(level);
  const quota = { perHour: config.eventQuota, exempt: serverParty };
  const eventProjector = new EventProjector(nats.reader, eventStore, quota, verifier, nodeId);
  await eventProjector.start();
  const sweepEvents = () => void eventProjector.sweep(clock.now()).catch((error) => console.error('sweeping old events failed:', error));
  sweepEvents();
  const eventSweeper = setInterval(sweepEvents, 600_000).unref();
  const stream = { publisher: nats.gateway.publisher, store: eventStore, projector: eventProjector, verifier, gate: access.gate, quota, pullsPerMinute: config.pullsPerMinute, pullWaiters: config.pullWaiters, reputations: (parties: string[]) => readModel.reputations(parties) };
  const notifier = new PactNotifier(
    nats.reader,
    eventStore,
    new NotifiedParties(level),
    // Made here from the journal and signed with the node's key: when it comes back from the stream, this
    // node's event projector takes it unchecked; every other node checks it.
    (event, receivedAt) => storeEvent(nats.gateway.publisher, event, receivedAt, eventProjector),
    pool?.signer ?? signingHere(nodeSigner(serverKey)),
    clock,
    projector.journalTap,
  );
  await notifier.start();
  await host.start();
  await payoutWorker.start();
  const reconciler = new Reconciler(rails, (pactId) => readModel.get(pactId));
  await reconciler.run();
  reconciler.start(60_000);
  await offers.acceptances.run();
  offers.acceptances.start(60_000);

  const internalToken = randomBytes(32).toString('hex');
  const selfAddress = () => config.evaluator.serviceUrl ?? selfUrl(config.host, app.server.address() as AddressInfo);
  // Told of disputes by the projector, as the payout worker is of payouts: no journal consumer of its own.
  const evaluator = new EvaluatorRole({
    hears: { mine: (pactId) => host.holds(partitionOfPact(pactId)) },
    // The token goes only to this node itself, never to a PACT_EVALUATOR_SERVICE_URL elsewhere.
    service: new ServiceClient(selfAddress, evaluatorKey, clock, config.evaluator.serviceUrl ? {} : { [INTERNAL_HEADER]: internalToken }),
    submit: (pactId, verdict) => bus.send(pactId, { type: 'verdict', verdict }),
    key: evaluatorKey,
    clock,
    attemptMs: config.evaluator.attemptMs,
  }, judge);
  projector.onEntry((pact) => evaluator.noticed(pact));

  const app = await buildGateway({
    bus, readModel, projector, offers, stream, access, clock, http: config.http, publicUrl: config.publicUrl, journalFeed: (id, after, signal) => journalFeed(nats.reader, id, after, signal), addressBook, creditWallets: credit.wallets, rateLimits: config.rateLimits, natsConnections: connectionsOf(nats), blobs, internalToken, version: VERSION, rails, policy, serverParty, payoutWorker, host,
    testHooks: config.testHooks ? { clock, keeper, reconciler, acceptances: offers.acceptances, projector, mockRail, evaluator, evaluatorConfig: config.evaluator, dataDir: config.dataDir } : undefined,
  });
  const closeApp = closerOf(app);
  await app.listen({ port: config.port, host: config.host });
  const { port } = app.server.address() as { port: number }; // PACT_PORT=0 picks a free port
  const wallet = await startWalletService({ port: config.walletPort, host: config.host, publicUrl: config.walletPublicUrl, claimsPerMinute: config.walletClaimsPerMinute, createsPerMinute: config.walletCreatesPerMinute, testHooks: config.testHooks, internalTokens: { configured: config.walletInternalToken, node: config.creditWalletUrl ? undefined : creditToken }, reservationTtlMs: config.walletReservationTtlMs, registrySources: config.walletRegistrySources, registryRefreshMs: config.walletRegistryRefreshMs, registryAllowPrivate: config.walletRegistryAllowPrivate, providerPayer: await providerPayerOf(config), providerTimeoutMs: config.walletProviderTimeoutMs, catalogFile: config.walletCatalogFile }, { nats: nats.host, level, nodeId }, clock, checkoutRails(config.walletCheckoutRails, rails, config.evm), [...rails.values()].filter((rail) => rail.name !== 'credit'));
  walletHere = selfUrl(config.host, { port: Number(new URL(wallet.url).port) } as AddressInfo);
  await credit.start();
  void keeper.tick();
  await evaluator.start();

  return {
    url: `http://${config.host}:${port}`,
    walletUrl: wallet.url,
    nats: natsServer.description,
    async close() {
      await evaluator.stop();
      await wallet.close();
      await closeApp();
      keeper.stop();
      clearInterval(linkSweeper);
      reconciler.stop();
      payoutWorker.stop();
      evmRails?.stop();
      credit.stop();
      await offers.stop();
      clearInterval(eventSweeper);
      await notifier.stop();
      await eventProjector.stop();
      await host.stop();
      await verifier.close();
      await projector.stop();
      remoteBus.close();
      payoutBus.close();
      for (const connection of connectionsOf(nats)) {
        // A NATS already gone (stopped with the whole process group, say) must not keep the rest from closing.
        await connection.drain().catch((error: unknown) => console.error('draining a NATS connection failed:', String(error)));
      }
      await level.close();
      await mockLevel.close();
      await blobLevel.close();
      await natsServer.stop?.();
    },
  };
}

/** The EVM rails when a chain is configured (loaded only then: viem, x402 and mppx are more than a second of start-up). */
async function evmRailsOf(config: Config, nats: RoleConnections['host'], addressBook: RailAddressBook, clock: Clock): Promise<EvmRails | undefined> {
  if (!config.evm) return undefined;
  const { openEvmRails } = await import('../rails/evm/open-evm-rails.js');
  return openEvmRails({ evm: config.evm, mpp: config.mpp, nats, addressBook, now: () => clock.now() });
}

/**
 * The wallet service's payer for x402 and mpp providers: its key on the rails' chain, when both are configured
 * (loaded only then: the payment clients are a second of start-up).
 */
async function providerPayerOf(config: Config): Promise<ProviderPayer | undefined> {
  if (!config.walletProviderKeyFile) return undefined;
  if (!config.evm) throw new Error('WALLET_PROVIDER_KEY_FILE needs the chain of the rails: set PACT_X402_RPC_URL (and PACT_X402_CHAIN_ID, PACT_X402_TOKEN)');
  const { ProviderPayer } = await import('../wallet/executions/provider-payer.js');
  return ProviderPayer.open(config.evm, config.walletProviderKeyFile);
}
