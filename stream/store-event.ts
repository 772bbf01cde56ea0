import type { JetStreamClient } from '@nats-io/jetstream';
import { EVENT_SUBJECT } from '../actors/subjects.js';
import type { StreamEvent } from './event.js';
import type { EventProjector } from './event-projector.js';
import type { Received } from './event-store.js';

/**
 * Appends a checked event to the Agent Stream, stamped with the time the service took it; resolves to its
 * stream sequence. The event id is the message id, so NATS keeps one copy of an event sent twice within
 * its duplicate window (the event store drops later copies). `checked` is this node's event projector, told
 * that the message was checked here.
 */
export async function storeEvent(js: JetStreamClient, event: StreamEvent, receivedAt: number, checked: Pick<EventProjector, 'vouch'>): Promise<number> {
  const received: Received = { receivedAt, event };
  const text = JSON.stringify(received);
  checked.vouch(text);
  return (await js.publish(EVENT_SUBJECT, text, { msgID: event.id })).seq;
}
