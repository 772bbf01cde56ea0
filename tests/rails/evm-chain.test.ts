import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { x402Facilitator } from '@x402/core/facilitator';
import { Receipt } from 'mppx';
import { evm as mppClientEvm, Mppx as MppClient } from 'mppx/client';
import { evm as mppServerEvm, Mppx as MppServer } from 'mppx/server';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeFunctionData, keccak256, type Address, type Hex } from 'viem';
import { testUsdcAbi } from '../../contracts/test-usdc-artifact.js';
import { startEvmChain, type EvmChain } from '../support/evm-chain.js';
import {
  authorizationOf,
  payV1,
  payV2,
  requirementV1,
  requirementV2,
  selfHostedFacilitator,
} from '../support/evm/x402-payments.js';

// The ground the x402 and mpp rails stand on: on a local ganache chain with our own EIP-3009 token, the
// pinned @x402 packages verify and settle v1 and v2 payments as our own facilitator, refuse a replay,
// an escrow payout signed here lands, and mppx's `evm` charge runs its 402 → credential → receipt round trip.

const test = suite<{ chain: EvmChain; facilitator: x402Facilitator }>('local EVM chain');

test.before(async (context) => {
  context.chain = await startEvmChain();
  context.facilitator = selfHostedFacilitator(context.chain);
});
test.after(async ({ chain }) => chain.stop());

const balancesOf = (chain: EvmChain, ...owners: Address[]) => Promise.all(owners.map((owner) => chain.balanceOf(owner)));

test('the chain is deterministic: fixed addresses, payers hold tokens and no ETH, the escrow holds ETH', async ({ chain }) => {
  assert.is(await chain.publicClient.getChainId(), 84532);
  assert.is(chain.escrow.address, '0x6326bF21D44C0270cADe27c842446574A7B83fBD');
  const payer = chain.payers[0]!;
  assert.is(await chain.balanceOf(payer.address), 1_000_000_000n);
  assert.is(await chain.publicClient.getBalance({ address: payer.address }), 0n);
  assert.ok((await chain.publicClient.getBalance({ address: chain.escrow.address })) > 0n);
  // Spent on a no-op at start: ganache would replay a rebroadcast nonce-0 payout (see evm-chain.ts).
  assert.is(await chain.publicClient.getTransactionCount({ address: chain.escrow.address }), 1);
  const read = (functionName: 'name' | 'version') =>
    chain.publicClient.readContract({ address: chain.token.address, abi: testUsdcAbi, functionName });
  assert.equal([await read('name'), await read('version')], [chain.token.name, chain.token.version]);
});

test('x402 v2: our facilitator verifies and settles a payer’s authorization, and the tokens move', async ({ chain, facilitator }) => {
  const payer = chain.payers[0]!;
  const requirement = requirementV2(chain, 1_500_000n);
  const payment = await payV2(payer, requirement);
  const before = await balancesOf(chain, payer.address, chain.escrow.address);

  const verified = await facilitator.verify(payment, requirement);
  assert.ok(verified.isValid, verified.invalidReason);
  assert.is(verified.payer, payer.address);
  const settled = await facilitator.settle(payment, requirement);
  assert.ok(settled.success, settled.errorReason);
  assert.is(settled.network, chain.network);

  const receipt = await chain.publicClient.getTransactionReceipt({ hash: settled.transaction as Hex });
  assert.is(receipt.status, 'success');
  assert.is(receipt.from.toLowerCase(), chain.escrow.address.toLowerCase(), 'the escrow wallet pays the gas');
  assert.equal(await balancesOf(chain, payer.address, chain.escrow.address), [before[0]! - 1_500_000n, before[1]! + 1_500_000n]);
  const { authorization } = authorizationOf(payment);
  assert.ok(await chain.authorizationUsed(payer.address, authorization.nonce));
});

test('x402 v1: a base-sepolia payload is verified and settled the same way', async ({ chain, facilitator }) => {
  const payer = chain.payers[1]!;
  const requirement = requirementV1(chain, 2_000_000n);
  const payment = await payV1(payer, requirement);
  assert.is(payment.network, 'base-sepolia');
  const before = await balancesOf(chain, payer.address, chain.escrow.address);

  // The facilitator's signature types name only v2; it dispatches on x402Version.
  const verified = await facilitator.verify(payment as never, requirement as never);
  assert.ok(verified.isValid, verified.invalidReason);
  const settled = await facilitator.settle(payment as never, requirement as never);
  assert.ok(settled.success, settled.errorReason);
  assert.is(settled.network, 'base-sepolia');
  assert.equal(await balancesOf(chain, payer.address, chain.escrow.address), [before[0]! - 2_000_000n, before[1]! + 2_000_000n]);
});

test('x402: a replayed authorization is refused by the facilitator and the token, and no money moves', async ({ chain, facilitator }) => {
  const payer = chain.payers[2]!;
  const requirement = requirementV2(chain, 700_000n);
  const payment = await payV2(payer, requirement);
  assert.ok((await facilitator.settle(payment, requirement)).success);
  const settledBalances = await balancesOf(chain, payer.address, chain.escrow.address);
  const escrowNonce = await chain.publicClient.getTransactionCount({ address: chain.escrow.address });

  const verified = await facilitator.verify(payment, requirement);
  assert.not.ok(verified.isValid);
  // Multicall3 is absent on a fresh chain, so the facilitator's diagnosis stays generic; the revert says why.
  assert.is(verified.invalidReason, 'invalid_exact_evm_transaction_simulation_failed');
  assert.match(verified.invalidMessage ?? '', 'TestUSDC: authorization is used');
  const settled = await facilitator.settle(payment, requirement);
  assert.not.ok(settled.success);
  assert.is(settled.errorReason, 'invalid_exact_evm_nonce_already_used');
  assert.is(settled.transaction, '');

  const { authorization } = authorizationOf(payment);
  assert.ok(await chain.authorizationUsed(payer.address, authorization.nonce));
  assert.equal(await balancesOf(chain, payer.address, chain.escrow.address), settledBalances);
  assert.is(await chain.publicClient.getTransactionCount({ address: chain.escrow.address }), escrowNonce, 'nothing was broadcast');
});

test('payout: an ERC-20 transfer signed by the escrow, hashed before broadcast, lands once', async ({ chain }) => {
  const payee = chain.payers[2]!;
  await chain.mint(chain.escrow.address, 5_000_000n);
  const before = await balancesOf(chain, chain.escrow.address, payee.address);
  const nonce = await chain.publicClient.getTransactionCount({ address: chain.escrow.address, blockTag: 'pending' });

  const request = await chain.escrowClient.prepareTransactionRequest({
    to: chain.token.address,
    data: encodeFunctionData({ abi: testUsdcAbi, functionName: 'transfer', args: [payee.address, 3_000_000n] }),
    nonce,
  });
  const raw = await chain.escrowClient.signTransaction(request);
  // What a payout outbox records before any I/O: the raw transaction and its hash.
  const hash = keccak256(raw);
  assert.is(await chain.escrowClient.sendRawTransaction({ serializedTransaction: raw }), hash);
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  assert.is(receipt.status, 'success');
  assert.equal(await balancesOf(chain, chain.escrow.address, payee.address), [before[0]! - 3_000_000n, before[1]! + 3_000_000n]);

  // Re-sending the same raw transaction (a retry after a crash) cannot pay twice: its nonce is spent.
  await chain.escrowClient.sendRawTransaction({ serializedTransaction: raw }).then(
    () => assert.unreachable('ganache accepted a transaction whose nonce is spent'),
    (error: unknown) => assert.match(String(error), "the tx doesn't have the correct nonce"),
  );
  assert.equal(await balancesOf(chain, chain.escrow.address, payee.address), [before[0]! - 3_000_000n, before[1]! + 3_000_000n]);
});

test('mpp: the evm charge goes 402 → Payment challenge → credential → receipt, settled on the chain', async ({ chain }) => {
  const payer = chain.payers[0]!;
  const settledBy: Address[] = [];
  const server = await startMppServer(chain, '1.25', (from) => settledBy.push(from));
  try {
    const before = await balancesOf(chain, payer.address, chain.escrow.address);
    const body = JSON.stringify({ pactId: 'p_test' });
    const first = await fetch(server.url, { method: 'POST', body });
    assert.is(first.status, 402);
    const challenge = first.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Payment /);
    assert.match(challenge, /method="evm"/);
    assert.match(challenge, /intent="charge"/);

    const payerClient = MppClient.create({
      methods: [
        mppClientEvm.charge({
          account: payer.account,
          authorization: { name: chain.token.name, version: chain.token.version },
          networks: [chain.chainId],
        }),
      ],
      polyfill: false,
    });
    const credential = await payerClient.createCredential(first);
    assert.match(credential, /^Payment /);
    const paid = await fetch(server.url, { method: 'POST', body, headers: { authorization: credential } });
    assert.is(paid.status, 200, await paid.clone().text());
    assert.equal(await paid.json(), { funded: true });

    const receipt = Receipt.fromResponse(paid);
    assert.is(receipt.status, 'success');
    assert.is(receipt.method, 'evm');
    const mined = await chain.publicClient.getTransactionReceipt({ hash: receipt.reference as Hex });
    assert.is(mined.status, 'success');
    assert.equal(settledBy, [payer.address]);
    assert.equal(await balancesOf(chain, payer.address, chain.escrow.address), [before[0]! - 1_250_000n, before[1]! + 1_250_000n]);
  } finally {
    await server.close();
  }
});

/**
 * A Payment-auth endpoint charging `amount` (display units) with mppx's `evm` method. mppx leaves settlement
 * to us: the escrow submits the authorization through the token's `bytes signature` overload.
 */
async function startMppServer(chain: EvmChain, amount: string, onSettle: (from: Address) => void) {
  const mppx = MppServer.create({
    realm: 'pact.test',
    secretKey: 'pact test secret key, at least 32 bytes long',
    methods: [
      mppServerEvm.charge({
        currency: chain.token.address,
        chainId: chain.chainId,
        decimals: chain.token.decimals,
        recipient: chain.escrow.address,
        authorization: { name: chain.token.name, version: chain.token.version },
        settle: async ({ payload }) => {
          const hash = await chain.escrowClient.writeContract({
            address: chain.token.address,
            abi: testUsdcAbi,
            functionName: 'transferWithAuthorization',
            args: [
              payload.from as Address,
              payload.to as Address,
              BigInt(payload.value),
              BigInt(payload.validAfter),
              BigInt(payload.validBefore),
              payload.nonce as Hex,
              payload.signature as Hex,
            ],
          });
          const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
          if (receipt.status !== 'success') throw new Error(`transferWithAuthorization reverted: ${hash}`);
          onSettle(payload.from as Address);
          return { reference: hash };
        },
      }),
    ],
  });
  const charge = MppServer.toNodeListener(mppx.charge({ amount, description: 'fund a test pact' }));
  const server: Server = createServer(async (req, res) => {
    const result = await charge(req, res);
    if (result.status === 402) return;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ funded: true }));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/pacts/p_test/fund`,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}

test.run();
