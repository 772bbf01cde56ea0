/**
 * The load generator: a child process of the bench (bench/load-generator.ts starts it) that prepares and
 * sends the requests of each job it is given (bench/jobs.ts), so that its CPU time is counted apart.
 */
import { prepareCold } from './cold.js';
import type { FromWorker, Job, Measured, ToWorker } from '../jobs.js';
import { prepareLifecycles } from './lifecycles.js';
import { prepareReads } from './reads.js';
import { prepareCreates } from './creates.js';
import { prepareOffers } from './offers.js';
import { prepareEvents } from './events.js';

function prepare(job: Job): () => Promise<Measured> {
  switch (job.kind) {
    case 'lifecycles':
      return prepareLifecycles(job);
    case 'creates':
      return prepareCreates(job);
    case 'cold':
      return prepareCold(job);
    case 'reads':
      return prepareReads(job);
    case 'offers':
      return prepareOffers(job);
    case 'events':
      return prepareEvents(job);
  }
}

const reply = (message: FromWorker) => process.send!(message);
let prepared: (() => Promise<Measured>) | undefined;

process.on('message', async (message: ToWorker) => {
  try {
    if ('job' in message) {
      prepared = prepare(message.job);
      reply({ ready: true });
    } else {
      const run = prepared!;
      prepared = undefined;
      reply({ measured: await run() });
    }
  } catch (error) {
    reply({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
// The bench is gone (killed, interrupted): so is the reason to run.
process.on('disconnect', () => process.exit(0));
