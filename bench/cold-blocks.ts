/**
 * `npm run bench:cold-blocks`: what nats-server alone costs a cold append. The journal's compare-and-set
 * (the expected last sequence of the pact's subject) makes nats-server read that subject's last message;
 * when the file block holding it (up to 8 MiB in nats-server 2.9, for a stream without limits) is no
 * longer in its memory, it loads the whole block first. A fresh nats-server (on PATH), a stream shaped like
 * the journal of 100,000 stored pacts (`npm run bench` prints the journal's size; about 260 MiB in the
 * temporary directory), an idle wait, then appends to random subjects one at a time. README, Benchmark.
 *
 *   COLD_BLOCKS_SUBJECTS (100000)  COLD_BLOCKS_BYTES (2650, a journal entry's mean size)  COLD_BLOCKS_PROBES (1000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { headers } from '@nats-io/transport-node';
import { RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { startNatsServer } from '../runtime/nats-server.js';
import { reapOnExit } from '../tests/support/reaper.js';
import { using } from './cleanup.js';
import { withJetStream } from './jetstream.js';
import { print } from './report.js';
import { envInt } from './settings.js';
import { fixed, latencySummary } from './stats.js';
import { inFlight } from './worker/http.js';

const SUBJECTS = envInt('COLD_BLOCKS_SUBJECTS', 100_000);
const BYTES = envInt('COLD_BLOCKS_BYTES', 2_650);
const PROBES = envInt('COLD_BLOCKS_PROBES', 1_000);
const FILL_IN_FLIGHT = 64;
/** Long enough for nats-server to let go of the blocks it wrote. */
const IDLE_MS = 6_000;
const STALL_MS = 5;

await using(
  () => mkdtempSync(join(tmpdir(), 'pact-cold-blocks-')),
  async (root) => rmSync(root, { recursive: true, force: true }),
  (root) =>
    using(
      async () => {
        const server = await startNatsServer(join(root, 'nats'));
        reapOnExit(server.pid);
        return server;
      },
      (server) => server.stop(),
      (server) => withJetStream(server.url, measure),
    ),
);

async function measure(js: JetStreamClient, jsm: JetStreamManager): Promise<void> {
  await jsm.streams.add({ name: 'COLD_BLOCKS', subjects: ['cold.>'], retention: RetentionPolicy.Limits, storage: StorageType.File });
  const data = new Uint8Array(BYTES).fill(120);
  const lastSeq = await fill(js, data);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const ms = await probe(js, data, lastSeq);
  console.log(`cold blocks: a stream of ${SUBJECTS} subjects, one ${BYTES}-byte message each (${fixed((SUBJECTS * BYTES) / 2 ** 20)} MiB), idle ${IDLE_MS / 1000} s`);
  print([
    `appends with the expected last subject sequence to random subjects, one at a time  ${latencySummary(ms)}`,
    `over ${STALL_MS} ms: ${ms.filter((m) => m > STALL_MS).length}`,
  ]);
}

/** One message per subject, FILL_IN_FLIGHT at a time; resolves to each subject's sequence. */
async function fill(js: JetStreamClient, data: Uint8Array): Promise<number[]> {
  const lastSeq: number[] = [];
  const subjects = Array.from({ length: SUBJECTS }, (_, i) => i);
  await inFlight(subjects, FILL_IN_FLIGHT, async (i) => {
    lastSeq[i] = (await js.publish(`cold.${i}`, data)).seq;
  });
  return lastSeq;
}

/** PROBES appends, each expecting its subject's last sequence; resolves to their latencies in ms. */
async function probe(js: JetStreamClient, data: Uint8Array, lastSeq: number[]): Promise<number[]> {
  const ms: number[] = [];
  for (let n = 0; n < PROBES; n++) {
    const i = Math.floor(Math.random() * SUBJECTS);
    const expect = headers();
    expect.set('Nats-Expected-Last-Subject-Sequence', String(lastSeq[i]));
    const start = performance.now();
    lastSeq[i] = (await js.publish(`cold.${i}`, data, { headers: expect })).seq;
    ms.push(performance.now() - start);
  }
  return ms;
}
