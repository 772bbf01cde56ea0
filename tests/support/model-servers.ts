import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ModelApi = 'openai' | 'anthropic';

/** How the fake model answers. `together`: hold verdicts until that many requests wait, then answer all. */
export type Behaviour =
  | { kind: 'verdict'; judgement: (request: unknown) => unknown; together?: number }
  | { kind: 'hang' }
  | { kind: 'garbage' }
  | { kind: 'invalid' }
  | { kind: 'refusal' }
  | { kind: 'status'; status: number };

export interface ModelRequest {
  headers: IncomingMessage['headers'];
  body: any;
}

export interface ModelServer {
  url: string;
  requests: ModelRequest[];
  set(behaviour: Behaviour): void;
  close(): Promise<void>;
}

/** The answer of each API, in its real shape, carrying `judgement` as the model's verdict. */
const ANSWERS: Record<ModelApi, { verdict(judgement: unknown): unknown; refusal(): unknown }> = {
  openai: {
    verdict: (judgement) => ({
      id: `chatcmpl-${randomUUID()}`,
      object: 'chat.completion',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: JSON.stringify(judgement), refusal: null } }],
    }),
    refusal: () => ({
      id: `chatcmpl-${randomUUID()}`,
      object: 'chat.completion',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' } }],
    }),
  },
  anthropic: {
    verdict: (judgement) => ({
      id: `msg_${randomUUID()}`,
      type: 'message',
      role: 'assistant',
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', id: `toolu_${randomUUID()}`, name: 'submit_verdict', input: judgement }],
    }),
    refusal: () => ({ id: `msg_${randomUUID()}`, type: 'message', role: 'assistant', stop_reason: 'refusal', content: [] }),
  },
};

/** A local stand-in for a model API on a free loopback port, recording every request it gets. */
export async function startModelServer(api: ModelApi, initial: Behaviour): Promise<ModelServer> {
  let behaviour = initial;
  const requests: ModelRequest[] = [];
  const held: (() => void)[] = [];
  const answer = (response: ServerResponse, status: number, body: unknown) =>
    response.writeHead(status, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));

  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    requests.push({ headers: request.headers, body });
    const now = behaviour;
    switch (now.kind) {
      case 'hang':
        return; // never answers; close() ends the socket
      case 'garbage':
        return response.writeHead(200, { 'content-type': 'application/json' }).end('\u0000<<not json at all>>');
      case 'invalid':
        return answer(response, 200, ANSWERS[api].verdict({ distribution: [{ party: 'ed25519:nobody', bp: 9000 }], feeFrom: 'objector', reason: 'x' }));
      case 'refusal':
        return answer(response, 200, ANSWERS[api].refusal());
      case 'status':
        return answer(response, now.status, { error: { message: 'the fake model is failing' } });
      case 'verdict': {
        const send = () => answer(response, 200, ANSWERS[api].verdict(now.judgement(body)));
        if (!now.together) return send();
        held.push(send);
        if (held.length >= now.together) held.splice(0).forEach((release) => release());
      }
    }
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  const root = api === 'openai' ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`;
  return {
    url: root,
    requests,
    set: (next) => (behaviour = next),
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
