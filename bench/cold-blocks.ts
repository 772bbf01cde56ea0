/**
 * `npm run bench:cold-blocks`: what nats-server alone costs a cold append, in the two ways a journal can
 * compare-and-set. With the expected last sequence of an entity's subject, nats-server reads that subject's
 * last message; when the file block holding it (up to 8 MiB in nats-server 2.9, for a stream without
 * limits) is no longer in its memory, it loads the whole block first. With a subject per entity and
 * position (the pact journal's), an append expects its subject empty, which nats-server answers from its
 * index of subjects. That index is what a subject costs: its memory is measured too.
 *
 * A fresh nats-server (on PATH), a stream shaped like the journal of 100,000 stored pacts (`npm run bench`
 * prints the journal's size; about 520 MiB in the temporary directory), an idle wait, then appends to
 * random entities one at a time, alternating the two ways. README, Benchmark.
 *
 *   COLD_BLOCKS_SUBJECTS (100000)  COLD_BLOCKS_BYTES (2650, a journal entry's mean size)  COLD_BLOCKS_PROBES (1000 each)
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
import { rssMiB } from './processes.js';
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

/** Entity `i`'s subject at position `n`, as long as a pact's. */
const at = (i: number, n: number) => `cold.evt.p_${i.toString(16).padStart(32, '0')}.${n}`;

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
      (server) => withJetStream(server.url, (js, jsm) => measure(js, jsm, () => rssMiB(server.pid))),
    ),
);

async function measure(js: JetStreamClient, jsm: JetStreamManager, rss: () => number): Promise<void> {
  await jsm.streams.add({ name: 'COLD_BLOCKS', subjects: ['cold.>'], retention: RetentionPolicy.Limits, storage: StorageType.File });
  const data = new Uint8Array(BYTES).fill(120);
  const idle = () => new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  await fill(js, data, (i) => at(i, 0));
  await idle();
  const rssFirst = rss();
  const lastSeq = await fill(js, data, (i) => at(i, 0)); // as many messages again, on the same subjects
  await idle();
  const rssSameSubjects = rss();
  await fill(js, data, (i) => at(i, 1)); // and again, each on a subject of its own
  await idle();
  const rssNewSubjects = rss();
  const { lastSubjectSequence, freePosition } = await probe(js, data, lastSeq);
  const perMessage = ((rssSameSubjects - rssFirst) * 2 ** 20) / SUBJECTS;
  const perSubject = ((rssNewSubjects - rssSameSubjects) * 2 ** 20) / SUBJECTS;
  console.log(`cold blocks: a stream of ${3 * SUBJECTS} ${BYTES}-byte messages (${fixed((3 * SUBJECTS * BYTES) / 2 ** 20)} MiB), idle ${IDLE_MS / 1000} s`);
  print([
    `appends with the expected last sequence of the entity's subject, one at a time  ${latencySummary(lastSubjectSequence)}, over ${STALL_MS} ms: ${over(lastSubjectSequence)}`,
    `appends expecting a subject of their own empty, one at a time                 ${latencySummary(freePosition)}, over ${STALL_MS} ms: ${over(freePosition)}`,
    `nats-server RSS at rest: ${fixed(rssFirst)} MiB with ${SUBJECTS} subjects; ${fixed(rssSameSubjects)} MiB after ${SUBJECTS} more messages on them (${fixed(perMessage, 0)} bytes a message); ${fixed(rssNewSubjects)} MiB after ${SUBJECTS} more on new subjects (${fixed(perSubject, 0)} bytes a subject)`,
  ]);
}

function over(ms: number[]): number {
  return ms.filter((m) => m > STALL_MS).length;
}

/** One message for each entity, on the subject `subjectOf` gives it, FILL_IN_FLIGHT at a time; resolves to their sequences. */
async function fill(js: JetStreamClient, data: Uint8Array, subjectOf: (i: number) => string): Promise<number[]> {
  const seqs: number[] = [];
  const entities = Array.from({ length: SUBJECTS }, (_, i) => i);
  await inFlight(entities, FILL_IN_FLIGHT, async (i) => {
    seqs[i] = (await js.publish(subjectOf(i), data)).seq;
  });
  return seqs;
}

/**
 * PROBES appends of each kind to entities not probed before, one at a time, in turn: expecting the last
 * sequence of the entity's first subject, and expecting a subject of its own empty. Resolves to their
 * latencies in ms.
 */
async function probe(js: JetStreamClient, data: Uint8Array, lastSeq: number[]) {
  const lastSubjectSequence: number[] = [];
  const freePosition: number[] = [];
  const untouched = shuffled(SUBJECTS).slice(0, 2 * PROBES);
  for (const [n, i] of untouched.entries()) {
    const expect = headers();
    const [subject, latencies] = n % 2 === 0 ? [at(i, 0), lastSubjectSequence] : [at(i, 2), freePosition];
    expect.set('Nats-Expected-Last-Subject-Sequence', n % 2 === 0 ? String(lastSeq[i]) : '0');
    const start = performance.now();
    await js.publish(subject, data, { headers: expect });
    latencies.push(performance.now() - start);
  }
  return { lastSubjectSequence, freePosition };
}

function shuffled(n: number): number[] {
  const items = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
