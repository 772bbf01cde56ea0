import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bytesToHex } from '@noble/hashes/utils.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPair } from '../../protocol/sign.js';
import { CliAgent, installCli } from '../support/cli.js';
import { MailServer } from '../support/mail-server.js';
import { Stack } from '../support/stack.js';

// The access commands against an invite-only server with a real SMTP server: a write refused with how to ask,
// request-access, verify (the mailed code on stdin), the operator's admin calls, then the write allowed.

const test = suite<{ stack: Stack; mail: MailServer; dir: string; pact: string }>('pact CLI, invite mode');
let agent: CliAgent;
let operator: CliAgent;

test.before(async (context) => {
  context.mail = await MailServer.start();
  const admin = generateKeyPair();
  context.dir = mkdtempSync(join(tmpdir(), 'pact-cli-invite-'));
  const keyFile = join(context.dir, 'server.seed');
  writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`);
  context.stack = await Stack.start({
    env: { PACT_ACCESS_MODE: 'invite', PACT_SMTP_URL: context.mail.url, PACT_MAIL_FROM: 'Pact <pact@test.example>', PACT_ADMIN_PARTY: admin.party, PACT_SERVER_KEY_FILE: keyFile },
  });
  context.pact = installCli(context.stack.url, context.dir).pact;
  agent = new CliAgent(context, 'agent');
  // The operator's key is the server's admin party: its agent.json is written as `pact init` writes one.
  operator = new CliAgent(context, 'operator');
  mkdirSync(operator.home, { mode: 0o700 });
  writeFileSync(join(operator.home, 'agent.json'), JSON.stringify({ privkey: bytesToHex(admin.secretKey), partyId: admin.party, server: context.stack.url }), { mode: 0o600 });
});

test.after(async ({ stack, mail, dir }) => {
  await stack?.stop();
  await mail?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('refused, request-access, verify (pending), admin allow, then writes pass; revoke closes them again', async ({ stack, mail }) => {
  const me = (await agent.expect(0, ['init', '--server', stack.url])).json.partyId;
  const spec = (await agent.expect(0, ['quickstart', '--counterparty', generateKeyPair().party])).json;
  const refused = await agent.expect(1, ['create'], JSON.stringify(spec));
  assert.match(refused.stderr, 'access_required (403)');
  assert.match(refused.stderr, 'POST /access/request', 'the refusal says how to ask');
  assert.equal((await agent.expect(0, ['access'])).json, { mode: 'invite', status: 'none' });
  assert.match((await agent.expect(1, ['bind-address', 'mock', 'my-payouts'])).stderr, 'access_required (403)');

  const email = `agent.${Date.now()}@example.org`;
  const before = mail.mails.length;
  await agent.expect(2, ['request-access']);
  assert.is((await agent.expect(0, ['request-access', '--email', email, '--use-case', 'translations'])).json.sent, true);
  const code = await mail.codeFor(email, before);
  await agent.expect(1, ['verify'], code === '000000' ? '111111\n' : '000000\n');
  await agent.expect(2, ['verify'], 'abc\n');
  assert.is((await agent.expect(0, ['verify'], `${code}\n`)).json.status, 'pending');

  await agent.expect(1, ['admin', 'pending']);
  const pending = (await operator.expect(0, ['admin', 'pending'])).json;
  assert.match(JSON.stringify(pending), me);
  await operator.expect(1, ['admin', 'allow']);
  await operator.expect(0, ['admin', 'allow', '--target', me, '--note', 'known translator']);
  assert.equal((await agent.expect(0, ['access'])).json, { mode: 'invite', status: 'allowed' });
  assert.is((await agent.expect(0, ['create'], JSON.stringify(spec))).json.pact.state, 'CREATED');

  await operator.expect(0, ['admin', 'revoke', '--target', me]);
  await agent.expect(1, ['create'], JSON.stringify({ ...spec, terms: { spec: 'another' } }));
});

test.run();
