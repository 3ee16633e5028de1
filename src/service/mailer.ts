/**
 * Where chat sign-in codes go (SPEC §6 TROUPE_SMTP_URL): an SMTP server, or, when none is set,
 * the log (a developer reads the code there).
 */
import type { Logger } from 'pino';

export interface Mailer {
  send(to: string, subject: string, text: string): Promise<void>;
}

export function logMailer(logger: Logger): Mailer {
  return {
    async send(to, subject, text) {
      logger.info({ to, subject, text }, 'mail (no TROUPE_SMTP_URL set: written to the log instead)');
    },
  };
}

/** `smtp://user:pass@host:port` or `smtps://…`; the sender is TROUPE_SMTP_FROM, else troupe@<SMTP host>. */
export async function smtpMailer(url: string, sender?: string): Promise<Mailer> {
  const nodemailer = await import('nodemailer');
  const transport = nodemailer.createTransport(url);
  const from = sender ?? `Troupe <troupe@${new URL(url).hostname || 'localhost'}>`;
  return {
    async send(to, subject, text) {
      await transport.sendMail({ from, to, subject, text });
    },
  };
}
