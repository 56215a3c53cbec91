import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A Standard Webhooks secret: `whsec_` + base64 of 24 random bytes. */
export const generateWebhookSecret = (): string => 'whsec_' + crypto.randomBytes(24).toString('base64');

/** The three Standard Webhooks headers for one attempt (the same `webhook-id` on every attempt). */
export function signedHeaders(secret: string, eventId: string, at: Date, payload: string): Record<string, string> {
  const timestamp = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp.getTime() / 1000),
    'webhook-signature': new Webhook(secret).sign(eventId, timestamp, payload),
  };
}
