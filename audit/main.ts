import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { decodeEntry, positionMessages } from '../actors/journal.js';
import { serversOf } from '../actors/nats.js';
import { connectOptionsOf, loadCredentials } from '../actors/nats-roles.js';
import { JOURNAL_STREAM, JOURNAL_WILDCARD } from '../actors/subjects.js';
import { JournalAudit } from './journal-audit.js';
import { checkOfferAcceptances } from './offer-acceptances.js';
import { OfferJournal } from '../actors/offer-journal.js';

// `npm run audit -- <pactId> | --all`: re-verifies pacts from the journal alone. Exit 0 when every entry
// holds, 1 when one does not, 2 on a usage or connection problem.

const USAGE = 'usage: npm run audit -- <pactId> | --all   (NATS_URL or the private nats-server recorded in PACT_DATA_DIR; PACT_NATS_CREDENTIALS for its users)';

/**
 * NATS_URL (with PACT_NATS_CREDENTIALS when set), else the private nats-server `npm start` recorded in the
 * data directory (with its users), else the default.
 */
function natsTarget(): { url: string; credentialsFile?: string } {
  const credentialsFile = process.env.PACT_NATS_CREDENTIALS || undefined;
  if (process.env.NATS_URL) return { url: process.env.NATS_URL, credentialsFile };
  const dataDir = resolve(process.env.PACT_DATA_DIR || './data');
  const record = join(dataDir, 'nats-server.json');
  if (!existsSync(record)) return { url: 'nats://127.0.0.1:4222', credentialsFile };
  const { url } = JSON.parse(readFileSync(record, 'utf8')) as { url: string };
  return { url, credentialsFile: credentialsFile ?? join(dataDir, 'nats-credentials.json') };
}

/** The stream sequence of the journal's last message, 0 when it has none. */
async function lastSequence(jsm: JetStreamManager): Promise<number> {
  const { state } = await jsm.streams.info(JOURNAL_STREAM);
  return state.messages > 0 ? state.last_seq : 0;
}

const IDLE_MS = 10_000;

/**
 * Feeds `audit` the message at each of the pact's positions, from 0 to the first empty one
 * (`positionMessages`); false when it has none.
 */
async function readPact(jsm: JetStreamManager, pactId: string, audit: JournalAudit): Promise<boolean> {
  let read = false;
  for await (const message of positionMessages(jsm, pactId, 0)) {
    audit.add(message.seq, decodeEntry(message.data, message.subject));
    read = true;
  }
  return read;
}

/**
 * Feeds `audit` every journal message up to `last` (or until none is pending: the last one may have been
 * deleted); false when the journal stops answering for IDLE_MS before that.
 */
async function readJournal(nc: NatsConnection, last: number, audit: JournalAudit): Promise<boolean> {
  const consumer = await jetstream(nc).consumers.get(JOURNAL_STREAM, { filter_subjects: JOURNAL_WILDCARD, deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume();
  let idle = setTimeout(() => messages.stop(), IDLE_MS);
  for await (const message of messages) {
    clearTimeout(idle);
    audit.add(message.seq, decodeEntry(message.data, message.subject));
    if (message.seq >= last || message.info.pending === 0) return true;
    idle = setTimeout(() => messages.stop(), IDLE_MS);
  }
  return false;
}

async function main(target: string | undefined): Promise<number> {
  if (!target || (target !== '--all' && !/^p_[0-9a-f]{32}$/.test(target))) {
    console.error(USAGE);
    return 2;
  }
  const { url, credentialsFile } = natsTarget();
  const reader = credentialsFile && existsSync(credentialsFile) ? loadCredentials(credentialsFile).reader : undefined;
  const nc = await connect({ servers: serversOf(url), timeout: 5_000, ...connectOptionsOf('reader', reader) });
  try {
    const jsm = await jetstreamManager(nc);
    const audit = new JournalAudit();
    if (target !== '--all' && !(await readPact(jsm, target, audit))) {
      console.error(`no journal entry of ${target}`);
      return 1;
    }
    const last = target === '--all' ? await lastSequence(jsm) : 0;
    if (last > 0 && !(await readJournal(nc, last, audit))) {
      console.error(`the journal stopped answering before sequence ${last}; the audit is incomplete`);
      return 2;
    }
    const js = jetstream(nc);
    await checkOfferAcceptances(audit, new OfferJournal(js, jsm));
    for (const line of audit.report()) console.log(line);
    return audit.failed ? 1 : 0;
  } finally {
    await nc.close();
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (error) => {
    console.error(`audit could not run: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  },
);
