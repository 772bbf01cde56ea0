import { Ajv } from 'ajv';
import { compiledLazily } from '../protocol/compiled-lazily.js';
import { pactError, type PactError } from '../protocol/errors.js';
import type { Verifier } from '../protocol/verify-pool.js';
import { wellFormedProblem } from '../protocol/well-formed.js';
import { eventProblem, type StreamEvent } from './event.js';
import { privateEventSchema, publicEventSchema } from './schemas.js';

const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false });
const validators = { public: compiledLazily(ajv, publicEventSchema), private: compiledLazily(ajv, privateEventSchema) };

/**
 * Why `value` is not an event the stream takes at `now`: its schema (422 `invalid_event`, with the failing
 * field), JSON that cannot be signed, then `eventProblem` (id 422, signature 401 checked by `verifier`, times 422). The gateway
 * checks what arrives over HTTP with it, and the event projector what arrives over NATS.
 */
export async function streamEventProblem(value: unknown, now: number, serverParty: string, verifier: Verifier): Promise<PactError | undefined> {
  const privacy = (value as { privacy?: unknown } | null)?.privacy;
  const validate = privacy === 'public' || privacy === 'private' ? validators[privacy]() : undefined;
  if (!validate) return pactError('invalid_event', 'privacy is "public" or "private"', { field: 'privacy' });
  if (!validate(value)) {
    const first = validate.errors?.[0];
    const field = first?.instancePath.replace(/^\//, '').replaceAll('/', '.') || (first?.params as { missingProperty?: string; additionalProperty?: string })?.missingProperty || (first?.params as { additionalProperty?: string })?.additionalProperty;
    return pactError('invalid_event', `event${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`, field ? { field } : {});
  }
  const unsignable = wellFormedProblem(value);
  if (unsignable) return pactError('invalid_event', unsignable);
  return eventProblem(value as StreamEvent, now, serverParty, verifier);
}
