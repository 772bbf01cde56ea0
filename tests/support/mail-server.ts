import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
}

/**
 * A real SMTP server on a free loopback port (smtp-server), keeping what it is sent, parsed by mailparser.
 * `refuse` makes it answer every message with a 550, as a failing mail server would.
 */
export class MailServer {
  readonly mails: ReceivedMail[] = [];
  refuse = false;
  private readonly waiting = new Set<() => void>();

  private constructor(private readonly server: SMTPServer) {}

  static async start(): Promise<MailServer> {
    let mailServer: MailServer;
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, done) {
        if (mailServer.refuse) {
          stream.resume();
          stream.on('end', () => done(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 })));
          return;
        }
        simpleParser(stream).then((parsed) => {
          for (const to of session.envelope.rcptTo) mailServer.mails.push({ to: to.address, subject: parsed.subject ?? '', text: parsed.text ?? '' });
          for (const wake of mailServer.waiting) wake();
          done();
        }, done);
      },
    });
    mailServer = new MailServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return mailServer;
  }

  get url(): string {
    return `smtp://127.0.0.1:${(this.server.server.address() as AddressInfo).port}`;
  }

  /** The latest mail to `to` after the first `after` mails, waiting up to 10 s for it. */
  async mailTo(to: string, after = 0): Promise<ReceivedMail> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const mail = this.mails.slice(after).reverse().find((m) => m.to === to);
      if (mail) return mail;
      if (Date.now() > deadline) throw new Error(`no mail to ${to}`);
      await new Promise<void>((resolve) => {
        const wake = () => (this.waiting.delete(wake), resolve());
        this.waiting.add(wake);
        setTimeout(wake, 200);
      });
    }
  }

  /** The six-digit code in the latest mail to `to`. */
  async codeFor(to: string, after = 0): Promise<string> {
    const { text } = await this.mailTo(to, after);
    const code = /\b(\d{6})\b/.exec(text)?.[1];
    if (!code) throw new Error(`no code in the mail to ${to}: ${text}`);
    return code;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
