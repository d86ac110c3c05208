import type { MailMessage } from './mailer.js';

/** The invitation e-mail (01 §4.4): who invited whom, and the single-use link. */
export function inviteMessage(to: string, options: { name: string; inviter: string | null; link: string; expiresAt: string }): MailMessage {
  const by = options.inviter ? `${options.inviter} has invited you` : 'You have been invited';
  return {
    to,
    subject: 'You have been invited to svc',
    text: [
      `Hello ${options.name},`,
      '',
      `${by} to svc. Choose a password to activate your account:`,
      '',
      options.link,
      '',
      `The link works once and expires at ${options.expiresAt}.`,
      'If you did not expect this invitation, ignore this e-mail.',
    ].join('\n'),
  };
}

/** The password-reset e-mail (01 §4.5, §8: the link lasts an hour). */
export function passwordResetMessage(to: string, options: { name: string; link: string; expiresAt: string }): MailMessage {
  return {
    to,
    subject: 'Reset your svc password',
    text: [
      `Hello ${options.name},`,
      '',
      'A password reset was requested for your svc account. Choose a new password here:',
      '',
      options.link,
      '',
      `The link works once and expires at ${options.expiresAt}. Every session of the account ends when the password changes.`,
      'If you did not ask for this, ignore this e-mail; your password stays as it is.',
    ].join('\n'),
  };
}

export function smsCodeText(purpose: 'phone_verify' | 'mfa_login', code: string, ttlSeconds: number): string {
  const minutes = Math.max(1, Math.round(ttlSeconds / 60));
  const what = purpose === 'phone_verify' ? 'verification' : 'sign-in';
  return `Your svc ${what} code is ${code}. It expires in ${minutes} minutes.`;
}
