import { CommandBus } from '../actors/command-bus.js';
import { connectClient } from '../actors/nats.js';
import { loadCredentials } from '../actors/nats-roles.js';
import { judgeOf } from '../evaluator/judge-of.js';
import { EvaluatorRole } from '../evaluator/role.js';
import { ServiceClient } from '../evaluator/service-client.js';
import { loadConfig } from './config.js';
import { loadKey } from './keys.js';

// The evaluator role alone (`npm run evaluator`), for a cluster: it follows the journal on NATS_URL, reads
// the service at PACT_EVALUATOR_SERVICE_URL and sends verdicts over NATS as a gateway would. Its clock is
// this machine's. The service nodes then run with PACT_EVALUATOR_MODE=none.
const config = loadConfig();
const settings = config.evaluator;
const missing = [
  ['NATS_URL', config.natsUrl],
  ['PACT_EVALUATOR_SERVICE_URL', settings.serviceUrl],
  ['PACT_EVALUATOR_KEY_FILE', settings.keyFile],
].filter(([, value]) => !value).map(([name]) => name);
if (missing.length > 0 || settings.mode === 'none') {
  console.error(`the evaluator needs ${[...missing, ...(settings.mode === 'none' ? ['a PACT_EVALUATOR_MODE other than none'] : [])].join(', ')}`);
  process.exit(1);
}

const credentials = config.natsCredentialsFile ? loadCredentials(config.natsCredentialsFile) : undefined;
const reader = await connectClient(config.natsUrl!, credentials?.reader, 'reader');
const gateway = credentials ? await connectClient(config.natsUrl!, credentials.gateway, 'gateway') : reader;
const bus = new CommandBus(gateway, config.partitions, config.commandTimeoutMs);
const key = loadKey(settings.keyFile!);
const clock = { now: () => Date.now() };
const role = new EvaluatorRole({
  hears: { journal: { nats: reader, consumerName: settings.consumer } },
  service: new ServiceClient(() => settings.serviceUrl!, key, clock),
  submit: (pactId, verdict) => bus.send(pactId, { type: 'verdict', verdict }),
  key,
  clock,
  attemptMs: settings.attemptMs,
}, judgeOf(settings));
await role.start();
console.log(`pact evaluator (${role.mode}, consumer ${settings.consumer}) judging disputes of ${settings.serviceUrl}`);

async function stop(signal: string): Promise<void> {
  console.log(`${signal}: closing`);
  await role.stop();
  bus.close();
  for (const nats of new Set([reader, gateway])) await nats.nc.drain();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
