import { createTransport } from 'nodemailer';

/** Sends plain-text mail; rejects when the mail was not taken by the server. */
export interface Mailer {
  send(message: { to: string; subject: string; text: string }): Promise<void>;
}

/** Bounds on one delivery, so that a request waiting on a stuck mail server ends with a 503. */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

/** Mail through the SMTP server at `url` (`smtp://…` or `smtps://…`, credentials in it), from `from`. */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = createTransport({ url, ...TIMEOUTS }, { from });
  return {
    async send(message) {
      // One recipient, given as an address object: nothing in it is read as a list or a display name.
      await transport.sendMail({ ...message, to: { name: '', address: message.to } });
    },
  };
}
