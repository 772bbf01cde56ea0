import type { FastifyError, FastifyInstance } from 'fastify';
import type { Caller } from './mcp-tools.js';

/** The tools server and a stateless transport for one request (the module is loaded on the first). */
async function mcpSession(app: FastifyInstance, caller: Caller) {
  const { toolsServer, StreamableHTTPServerTransport } = await import('./mcp-tools.js');
  return { server: toolsServer(app, caller), transport: new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }) };
}

/** A JSON-RPC error for a request that is not one (the protocol's fault, never a tool's). */
const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

/**
 * `POST /mcp`: MCP Streamable HTTP, stateless (a server and transport per request), JSON responses. A body that is
 * not a JSON-RPC message is a JSON-RPC error; GET and DELETE are 405 (no stream, no session).
 */
export function registerMcp(app: FastifyInstance): void {
  void app.register(async (scoped) => {
    scoped.setErrorHandler((error: FastifyError, _request, reply) => {
      const tooLarge = error.statusCode === 413;
      return reply.code(tooLarge ? 413 : 400).send(rpcError(tooLarge ? -32600 : -32700, tooLarge ? 'the message is too large' : `not a JSON-RPC message: ${error.message}`));
    });
    scoped.post('/mcp', { schema: { operationId: 'mcp' } }, async (request, reply) => {
      reply.hijack();
      try {
        const { server, transport } = await mcpSession(app, { authorization: request.headers.authorization, host: request.headers.host });
        reply.raw.on('close', () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (error) {
        console.error('an MCP request failed:', String(error));
        if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(rpcError(-32603, 'internal error')));
        else reply.raw.end();
      }
    });
    for (const method of ['GET', 'DELETE'] as const) {
      scoped.route({ method, url: '/mcp', schema: { hide: true }, handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send(rpcError(-32000, 'this server is stateless: POST JSON-RPC messages to /mcp')) });
    }
  });
}
