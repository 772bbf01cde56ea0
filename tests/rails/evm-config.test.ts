import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evmConfig } from '../../rails/evm/config.js';

// PACT_X402_* as the start reads them: the token address checked against its checksum and given back
// checksummed, the escrow key file holding exactly one 32-byte hex key.

const TOKEN = '0x036CbD53842c5426634e7929541eC2318f3dCF7e'; // USDC on Base Sepolia, checksummed
const KEY = `0x${'ab'.repeat(32)}`;

function withKeyFile(text: string, run: (file: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'pact-evm-config-'));
  try {
    const file = join(dir, 'escrow.key');
    writeFileSync(file, text);
    run(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const env = (file: string, token = TOKEN) => ({ PACT_X402_RPC_URL: 'http://127.0.0.1:8545', PACT_X402_CHAIN_ID: '84532', PACT_X402_TOKEN: token, PACT_ESCROW_KEY_FILE: file });

test('no RPC URL: no EVM rails', () => {
  assert.is(evmConfig({}), undefined);
});

test('a token address in lower case is taken and given back checksummed; a wrong checksum is refused', () => {
  withKeyFile(`${KEY}\n`, (file) => {
    assert.is(evmConfig(env(file, TOKEN.toLowerCase()))!.token.address, TOKEN);
    assert.is(evmConfig(env(file))!.token.address, TOKEN);
    const miscased = TOKEN.replace('Cb', 'cB');
    assert.throws(() => evmConfig(env(file, miscased)), /PACT_X402_TOKEN is not an address/);
    for (const bad of ['0x1234', `0x${TOKEN.slice(2).toUpperCase()}`, `0X${TOKEN.slice(2)}`, TOKEN.slice(2)]) {
      assert.throws(() => evmConfig(env(file, bad)), /PACT_X402_TOKEN is not an address/, bad);
    }
  });
});

test('the escrow key file: one 32-byte hex key, with or without 0x; anything else is refused without echoing it', () => {
  withKeyFile('ab'.repeat(32), (file) => assert.is(evmConfig(env(file))!.escrowKey, KEY));
  for (const bad of ['ab'.repeat(31), `0x${'zz'.repeat(32)}`, `${KEY}00`, '']) {
    withKeyFile(bad, (file) => {
      const refusal = (() => {
        try {
          evmConfig(env(file));
          return undefined;
        } catch (error) {
          return String(error);
        }
      })();
      assert.ok(refusal, `${JSON.stringify(bad)} was taken`);
      assert.match(refusal!, 'does not hold a 32-byte hex private key');
      if (bad) assert.not.match(refusal!, bad);
    });
  }
});

test('PACT_EVM_MIN_GAS_WEI: a whole number of wei, its default when blank; anything else is refused, naming it', () => {
  withKeyFile(KEY, (file) => {
    const minGas = (value: string) => evmConfig({ ...env(file), PACT_EVM_MIN_GAS_WEI: value })!.minGasWei;
    assert.is(evmConfig(env(file))!.minGasWei, 10n ** 15n);
    assert.is(minGas(' '), 10n ** 15n);
    assert.is(minGas('0'), 0n);
    assert.is(minGas(' 5000 '), 5000n);
    for (const bad of ['-1', '1.5', '0x10', '1e15', 'lots']) {
      assert.throws(() => minGas(bad), (error: Error) => error.message === `PACT_EVM_MIN_GAS_WEI must be a non-negative integer (wei), got ${bad}`, bad);
    }
  });
});

test('PACT_EVM_POLL_MS and PACT_X402_TOKEN_DECIMALS take their defaults when blank', () => {
  withKeyFile(KEY, (file) => {
    const config = evmConfig({ ...env(file), PACT_EVM_POLL_MS: ' ', PACT_X402_TOKEN_DECIMALS: ' ' })!;
    assert.is(config.pollingIntervalMs, 1000);
    assert.is(config.token.decimals, 6);
    assert.throws(() => evmConfig({ ...env(file), PACT_EVM_POLL_MS: '0' }), /PACT_EVM_POLL_MS must be a positive integer, got 0/);
  });
});

test.run();
