import type { Publisher } from '../actors/acked-publisher.js';
import { EVENT_SUBJECT } from '../actors/subjects.js';
import type { Received, StreamEvent } from './event.js';
import type { EventProjector } from './event-projector.js';

/**
 * Appends an event to the Agent Stream, stamped with the time the service took it; resolves to its stream
 * sequence. The event id is the message id, so NATS keeps one copy of an event sent twice within its
 * duplicate window (the event store drops later copies). `vouchTo`, when the event was checked here (the
 * gateway's publish) or made here (the node's pact notifications), is this node's event projector, told so
 * for as long as the message is on its way.
 */
export async function storeEvent(publisher: Publisher, event: StreamEvent, receivedAt: number, vouchTo?: Pick<EventProjector, 'vouch' | 'unvouch'>): Promise<number> {
  const received: Received = { receivedAt, event };
  const text = JSON.stringify(received);
  vouchTo?.vouch(text);
  try {
    const ack = await publisher.publish(EVENT_SUBJECT, text, { msgID: event.id });
    if (ack.duplicate) vouchTo?.unvouch(text); // this text is not on the stream: nothing will come back
    return ack.seq;
  } catch (error) {
    vouchTo?.unvouch(text);
    throw error;
  }
}
