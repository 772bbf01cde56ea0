import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { WALLET_API } from './app.js';

// The MCP tools, loaded by `POST /mcp` on its first call: the MCP SDK and zod are most of a second of start-up.

type Call = { method: 'GET' | 'POST'; url: string; payload?: unknown; idempotencyKey?: string | undefined };

/** What a tool call carries over from its HTTP request: the bearer, and the Host the URLs it hands out name. */
export type Caller = { authorization?: string | undefined; host?: string | undefined };

const IDEMPOTENCY_KEY = z.string().min(1).max(255).optional().describe('sent as Idempotency-Key: a retry with the same key and arguments is answered once');
const usd = z.string().regex(/^(0|[1-9][0-9]{0,29})$/).describe('micro-USD (1 USD = "1000000")');
const money = (amount: string | undefined) => (amount === undefined ? undefined : { amount, asset: 'USD' as const });
const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams(Object.entries(params).flatMap(([name, value]) => (value === undefined ? [] : [[name, String(value)]])));
  return search.size > 0 ? `?${search}` : '';
};

/**
 * The MCP tools (WALLET-DECISIONS.md, MCP), each the HTTP route it names, run in process with the request's own
 * `Authorization`: the same checks, the same answers. A refusal (402, 502, …) is a result with `isError: true` and
 * the route's error body; JSON-RPC errors are left to protocol faults.
 */
export function toolsServer(app: FastifyInstance, caller: Caller): McpServer {
  const server = new McpServer({ name: 'pact-wallet', version: WALLET_API.version });
  const call = async ({ method, url, payload, idempotencyKey }: Call) => {
    const headers = Object.fromEntries(
      Object.entries({ authorization: caller.authorization, host: caller.host, 'idempotency-key': idempotencyKey }).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    const answer = await app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }), headers });
    const body = answer.json() as Record<string, unknown>;
    return { content: [{ type: 'text' as const, text: JSON.stringify(body) }], structuredContent: body, isError: answer.statusCode >= 400 };
  };
  server.registerTool('list_capabilities', { description: 'The capability catalog, filtered by category and words.', inputSchema: { category: z.string().max(64).optional(), q: z.string().max(200).optional() } }, (args) =>
    call({ method: 'GET', url: `/v1/catalog${query(args)}` }),
  );
  server.registerTool(
    'search_registry',
    {
      description: 'The normalised x402 and MPP provider registry, filtered and paged.',
      inputSchema: { rail: z.enum(['x402', 'mpp']).optional(), q: z.string().max(200).optional(), network: z.string().max(64).optional(), maxPrice: usd.optional(), status: z.enum(['active', 'unreachable']).optional(), limit: z.number().int().min(1).max(100).optional(), cursor: z.string().max(40).optional() },
    },
    (args) => call({ method: 'GET', url: `/v1/registry${query(args)}` }),
  );
  server.registerTool(
    'discover_capabilities',
    {
      description: 'Ranks capabilities and providers for a task, with reasons.',
      inputSchema: { task: z.string().max(2000), limit: z.number().int().min(1).max(50).optional(), maxPrice: usd.optional(), rails: z.array(z.enum(['x402', 'mpp'])).max(2).optional(), categories: z.array(z.string().max(64)).max(20).optional(), optimize: z.enum(['cost', 'speed', 'reliability', 'quality']).optional() },
    },
    ({ maxPrice, ...rest }) => call({ method: 'POST', url: '/v1/discover', payload: { ...rest, ...(maxPrice ? { maxPrice: money(maxPrice) } : {}) } }),
  );
  server.registerTool('get_wallet', { description: "The caller's wallet: balance, funding, usage and ledger (Authorization: Bearer wk_…).", inputSchema: {} }, () => call({ method: 'GET', url: '/v1/me' }));
  server.registerTool(
    'create_checkout',
    { description: 'A hosted checkout URL that adds credit to the caller\'s wallet.', inputSchema: { amount: usd, successUrl: z.string().max(2048).optional(), cancelUrl: z.string().max(2048).optional(), idempotencyKey: IDEMPOTENCY_KEY } },
    ({ amount, idempotencyKey, ...rest }) => call({ method: 'POST', url: '/v1/checkout', payload: { amount: money(amount), ...rest }, idempotencyKey }),
  );
  server.registerTool(
    'execute_capability',
    { description: 'Runs a capability on a provider, paid from the wallet, with a receipt.', inputSchema: { capabilityId: z.string().max(128), registryId: z.string().max(64).optional(), input: z.unknown(), maxPrice: usd.optional(), idempotencyKey: IDEMPOTENCY_KEY } },
    ({ maxPrice, idempotencyKey, ...rest }) => call({ method: 'POST', url: '/v1/executions', payload: { ...rest, ...(maxPrice ? { maxPrice: money(maxPrice) } : {}) }, idempotencyKey }),
  );
  server.registerTool('get_execution', { description: 'An execution and its receipt.', inputSchema: { id: z.string().max(64) } }, ({ id }) =>
    call({ method: 'GET', url: `/v1/executions/${encodeURIComponent(id)}` }),
  );
  return server;
}

export { StreamableHTTPServerTransport };
