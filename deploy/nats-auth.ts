import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { authorizationConfig, generateCredentials, loadCredentials } from '../actors/nats-roles.js';

// `npm run nats-auth -- <dir>`: the NATS users of the service's roles. Writes `<dir>/credentials.json`
// (give it to every Pact node as PACT_NATS_CREDENTIALS) once, and `<dir>/auth.conf` (append it to every
// nats-server's configuration) from it each time, so the permissions follow the code's.

const dir = process.argv[2];
if (!dir) {
  console.error('usage: npm run nats-auth -- <dir>');
  process.exit(2);
}
const target = resolve(dir);
mkdirSync(target, { recursive: true, mode: 0o700 });
const credentialsFile = join(target, 'credentials.json');
if (!existsSync(credentialsFile)) writeFileSync(credentialsFile, JSON.stringify(generateCredentials(), null, 2), { mode: 0o600 });
writeFileSync(join(target, 'auth.conf'), authorizationConfig(loadCredentials(credentialsFile)), { mode: 0o600 });
console.log(`PACT_NATS_CREDENTIALS=${credentialsFile}`);
console.log(`append ${join(target, 'auth.conf')} to each nats-server configuration`);
