import { ExitCode } from '../exit-codes.js';

/** CLI.md "Errors and exit codes", as `svc help exit-codes` prints it. */
export const EXIT_CODES: readonly { code: number; meaning: string }[] = [
  { code: ExitCode.SUCCESS, meaning: 'success' },
  { code: ExitCode.UNEXPECTED, meaning: 'unexpected failure (a bug: a short message; the stack with --debug or DEBUG=svc*)' },
  { code: ExitCode.USAGE, meaning: 'usage or input error found before any request (bad flag, missing value, refused confirmation)' },
  { code: ExitCode.AUTH, meaning: 'authentication failed (HTTP 401): not logged in, expired or revoked key' },
  { code: ExitCode.FORBIDDEN, meaning: 'permission denied (HTTP 403), including MFA required and inactive partner' },
  { code: ExitCode.NOT_FOUND, meaning: 'not found (HTTP 404)' },
  { code: ExitCode.CONFLICT, meaning: 'conflict or invalid state (HTTP 409, 400 business-rule refusals, a broken audit chain)' },
  { code: ExitCode.RATE_LIMITED, meaning: 'rate limited (HTTP 429) after the retries allowed' },
  { code: ExitCode.SERVER, meaning: 'server or network failure (HTTP 5xx, connection refused, timeout)' },
  { code: ExitCode.INCOMPLETE, meaning: 'incomplete result (an export window that is not complete yet, a partial 207)' },
  { code: ExitCode.INTERRUPTED, meaning: 'interrupted (Ctrl-C at a prompt or during work); nothing half-written is left behind' },
];

export interface EnvVar {
  name: string;
  /** Who reads it: the CLI, the bundled server (`svc server …`), or both. */
  usedBy: 'cli' | 'server' | 'both';
  default: string;
  meaning: string;
}

/**
 * Every environment variable `svc` reads. The server's come from src/server/config.ts (a test checks that every
 * variable there is listed here); the CLI cannot import the server's code, so the list is written out.
 */
export const ENVIRONMENT: readonly EnvVar[] = [
  // The CLI
  { name: 'SVC_PROFILE', usedBy: 'cli', default: 'the selected profile, else "default"', meaning: 'Profile to use (--profile wins over it)' },
  { name: 'SVC_BASE_URL', usedBy: 'cli', default: 'the profile\'s, else http://127.0.0.1:3000', meaning: 'Base URL of the deployment (--base-url wins over it)' },
  { name: 'SVC_API_KEY', usedBy: 'cli', default: 'unset', meaning: 'API key to authenticate with; nothing is read from or written to disk. Wins over SVC_TOKEN' },
  { name: 'SVC_TOKEN', usedBy: 'cli', default: 'unset', meaning: 'Access token to authenticate with; nothing is read from or written to disk' },
  { name: 'CI', usedBy: 'cli', default: 'unset', meaning: 'Any value but 0/false: never prompt, spin or colour (also when stdin or stdout is not a terminal)' },
  { name: 'NO_COLOR', usedBy: 'cli', default: 'unset', meaning: 'Any value: no colour (as --no-color)' },
  { name: 'TERM', usedBy: 'cli', default: 'from the terminal', meaning: '"dumb" turns colour off' },
  { name: 'DEBUG', usedBy: 'cli', default: 'unset', meaning: 'svc* prints stack traces on failure (as --debug)' },
  { name: 'XDG_CONFIG_HOME', usedBy: 'cli', default: '~/.config', meaning: 'Profiles in $XDG_CONFIG_HOME/svc/config.json; credentials.json beside it when no keychain answers' },
  { name: 'DBUS_SESSION_BUS_ADDRESS', usedBy: 'cli', default: 'from the desktop session', meaning: 'Linux: the session bus where the Secret Service keychain is asked; without it secrets go to the 0600 file' },
  // The bundled server
  { name: 'SVC_DATA_DIR', usedBy: 'server', default: '$XDG_DATA_HOME/svc (~/.local/share/svc)', meaning: 'Database svc.db, server keys secrets.json, pid file and log: the dir 0700, its files 0600 (--data-dir wins over it)' },
  { name: 'XDG_DATA_HOME', usedBy: 'server', default: '~/.local/share', meaning: 'Parent of the default data directory' },
  { name: 'HOST', usedBy: 'server', default: '127.0.0.1', meaning: 'Address to listen on: an IP address or a host name (--host)' },
  { name: 'PORT', usedBy: 'server', default: '3000', meaning: 'Port to listen on; 0 picks a free one (--port)' },
  { name: 'SVC_LOG_LEVEL', usedBy: 'server', default: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent; JSON lines, never with credentials (--log-level)' },
  { name: 'SVC_LOG_FILE', usedBy: 'server', default: '<data dir>/server.log', meaning: 'Where the request log goes (0600); - for stderr (--log-file)' },
  { name: 'SVC_PUBLIC_URL', usedBy: 'server', default: 'unset', meaning: 'The URL users reach the server at (for links the server builds)' },
  { name: 'SVC_ADMIN_EMAIL', usedBy: 'server', default: 'admin@svc.localhost', meaning: 'System administrator created on first start (ignored later, with a note)' },
  { name: 'SVC_ADMIN_PASSWORD', usedBy: 'server', default: 'generated, printed once', meaning: 'Its password (at least 8 characters)' },
  { name: 'SVC_JWT_SECRET', usedBy: 'server', default: 'generated into the data dir', meaning: 'Signing key of access tokens (at least 32 characters)' },
  { name: 'SVC_ENCRYPTION_KEY', usedBy: 'server', default: 'generated into the data dir', meaning: 'AES-256-GCM key for stored secrets (64 hex characters)' },
  { name: 'SVC_ENROLLMENT_PEPPER', usedBy: 'server', default: 'generated into the data dir', meaning: 'Pepper of enrollment key hashes (at least 32 characters)' },
  { name: 'ENABLE_2FA', usedBy: 'server', default: 'on', meaning: 'MFA (1/true/yes/on, 0/false/no/off)' },
  { name: 'ENABLE_REGISTRATION', usedBy: 'server', default: 'on', meaning: 'Self-registration of users and partners' },
  { name: 'SVC_TRUSTED_PROXIES', usedBy: 'server', default: 'none', meaning: 'Comma-separated addresses or CIDR ranges whose X-Forwarded-For / X-Real-IP are believed' },
  { name: 'SVC_BODY_LIMIT_BYTES', usedBy: 'server', default: '1048576', meaning: 'Largest request body accepted' },
  { name: 'SVC_ACCESS_TOKEN_TTL_SECONDS', usedBy: 'server', default: '900', meaning: 'Lifetime of access tokens' },
  { name: 'SVC_REFRESH_TOKEN_TTL_SECONDS', usedBy: 'server', default: '2592000 (30 days)', meaning: 'Lifetime of refresh tokens' },
  { name: 'SVC_COOKIE_SECURE', usedBy: 'server', default: 'off', meaning: 'Mark the refresh cookie Secure (behind HTTPS)' },
  { name: 'SVC_LOGIN_IP_LIMIT', usedBy: 'server', default: '10', meaning: 'Sign-in attempts per client address per window' },
  { name: 'SVC_LOGIN_EMAIL_LIMIT', usedBy: 'server', default: '5', meaning: 'Sign-in attempts per e-mail per window' },
  { name: 'SVC_LOGIN_WINDOW_SECONDS', usedBy: 'server', default: '300', meaning: 'Window of the sign-in limits' },
  { name: 'SVC_LOGIN_LOCKOUT_FAILURES', usedBy: 'server', default: '5', meaning: 'Failed sign-ins that lock an account' },
  { name: 'SVC_LOGIN_LOCKOUT_SECONDS', usedBy: 'server', default: '900', meaning: 'How long a locked account stays locked' },
  { name: 'SVC_MFA_LIMIT', usedBy: 'server', default: '5', meaning: 'MFA code attempts per window' },
  { name: 'SVC_MFA_WINDOW_SECONDS', usedBy: 'server', default: '300', meaning: 'Window of the MFA limit' },
  { name: 'SVC_REGISTER_LIMIT', usedBy: 'server', default: '5', meaning: 'User registrations per client address per window' },
  { name: 'SVC_REGISTER_PARTNER_LIMIT', usedBy: 'server', default: '3', meaning: 'Partner registrations per client address per window' },
  { name: 'SVC_REGISTER_WINDOW_SECONDS', usedBy: 'server', default: '3600', meaning: 'Window of the registration limits' },
  { name: 'SVC_JOB_POLL_MS', usedBy: 'server', default: '1000', meaning: 'How often the background worker looks for due jobs' },
  { name: 'SVC_SHUTDOWN_TIMEOUT_MS', usedBy: 'server', default: '10000', meaning: 'How long a graceful shutdown may take before the process exits' },
  { name: 'SVC_ENROLLMENT_KEY_TTL_MINUTES', usedBy: 'server', default: '60', meaning: 'Default lifetime of an enrollment key' },
  { name: 'SVC_SMTP_URL', usedBy: 'server', default: 'unset (no mail is sent)', meaning: 'smtp:// or smtps:// URL for invitations and password resets' },
  { name: 'SVC_SMTP_FROM', usedBy: 'server', default: 'svc <no-reply@localhost>', meaning: 'Sender of that mail' },
  { name: 'SVC_SMTP_TIMEOUT_MS', usedBy: 'server', default: '10000', meaning: 'Timeout of one mail delivery' },
  { name: 'SVC_SMS_URL', usedBy: 'server', default: 'unset (no SMS)', meaning: 'SMS gateway: the server POSTs JSON {to, body} to this http(s) URL' },
  { name: 'SVC_SMS_TOKEN', usedBy: 'server', default: 'unset', meaning: 'Bearer token sent to the SMS gateway' },
  { name: 'SVC_PAGERDUTY_EVENTS_URL', usedBy: 'server', default: 'https://events.pagerduty.com/v2/enqueue', meaning: 'Events API v2 endpoint of the pagerduty (incident) alert channel' },
  { name: 'SVC_TWILIO_API_URL', usedBy: 'server', default: 'https://api.twilio.com', meaning: 'Base URL of the Twilio Messaging API used by the sms alert channel' },
  { name: 'SVC_TWILIO_ACCOUNT_SID', usedBy: 'server', default: 'unset (sms channels fail: SMS service not configured)', meaning: 'Twilio account SID of the sms alert channel' },
  { name: 'SVC_TWILIO_AUTH_TOKEN', usedBy: 'server', default: 'unset', meaning: 'Twilio auth token of the sms alert channel' },
  { name: 'SVC_TWILIO_FROM', usedBy: 'server', default: 'unset', meaning: 'E.164 sender of sms channels that set neither from nor messagingServiceSid' },
  { name: 'SVC_EXPORT_SETTLE_SECONDS', usedBy: 'server', default: '300', meaning: 'Newest seconds of the elevation audit trail withheld from exports until settled' },
  { name: 'SVC_WEBAUTHN_RP_ID', usedBy: 'server', default: 'host of SVC_PUBLIC_URL, else localhost', meaning: 'WebAuthn relying-party id for elevation approvals' },
  { name: 'SVC_WEBAUTHN_ORIGIN', usedBy: 'server', default: 'SVC_PUBLIC_URL', meaning: 'Allowed WebAuthn origins, comma-separated' },
  { name: 'SVC_SMS_TIMEOUT_MS', usedBy: 'server', default: '10000', meaning: 'Timeout of one SMS delivery' },
  { name: 'SVC_SMS_CODE_TTL_SECONDS', usedBy: 'server', default: '600', meaning: 'Lifetime of an SMS sign-in code' },
  { name: 'SVC_SMS_CODE_ATTEMPTS', usedBy: 'server', default: '5', meaning: 'Attempts allowed per SMS code' },
  { name: 'SVC_SMS_SEND_LIMIT', usedBy: 'server', default: '5', meaning: 'SMS codes sent per user per window' },
  { name: 'SVC_SMS_SEND_WINDOW_SECONDS', usedBy: 'server', default: '900', meaning: 'Window of the SMS limit' },
  { name: 'SVC_INVITE_TTL_HOURS', usedBy: 'server', default: '72', meaning: 'Lifetime of an invitation link' },
  { name: 'SVC_PASSWORD_RESET_TTL_MINUTES', usedBy: 'server', default: '60', meaning: 'Lifetime of a password-reset link' },
  { name: 'SVC_PASSWORD_RESET_LIMIT', usedBy: 'server', default: '5', meaning: 'Password-reset requests per client address per window' },
  { name: 'SVC_PASSWORD_RESET_WINDOW_SECONDS', usedBy: 'server', default: '3600', meaning: 'Window of the password-reset limit' },
  { name: 'SVC_OUTBOUND_ALLOW', usedBy: 'server', default: '(none)', meaning: 'CIDRs that outgoing requests (webhooks, SSO, alert channels) may reach despite the private-address guard, comma-separated' },
  { name: 'SVC_WEBHOOK_TIME_SCALE', usedBy: 'server', default: '1', meaning: 'Factor (0-1) applied to webhook retry delays, for tests' },
  { name: 'SVC_ALERT_TIME_SCALE', usedBy: 'server', default: '1', meaning: 'Factor (0-1) applied to alert escalation step delays, for tests' },
  { name: 'SVC_FCM_PROJECT_ID', usedBy: 'server', default: '(none)', meaning: 'Firebase project of Android pushes (FCM HTTP v1); without it and the key file, pushes are recorded stubbed' },
  { name: 'SVC_FCM_SERVICE_ACCOUNT_FILE', usedBy: 'server', default: '(none)', meaning: 'Path of the Firebase service-account key (JSON) that signs the token request' },
  { name: 'SVC_FCM_API_URL', usedBy: 'server', default: 'https://fcm.googleapis.com', meaning: 'Base URL of the FCM HTTP v1 API' },
  { name: 'SVC_FCM_TOKEN_URL', usedBy: 'server', default: "the key's token_uri", meaning: 'OAuth2 token endpoint for the FCM service account' },
  { name: 'SVC_APNS_KEY_FILE', usedBy: 'server', default: '(none)', meaning: 'Path of the APNs .p8 signing key of iOS pushes; without it and the three below, pushes are recorded stubbed' },
  { name: 'SVC_APNS_KEY_ID', usedBy: 'server', default: '(none)', meaning: 'Id of the APNs signing key' },
  { name: 'SVC_APNS_TEAM_ID', usedBy: 'server', default: '(none)', meaning: 'Apple developer team id' },
  { name: 'SVC_APNS_TOPIC', usedBy: 'server', default: '(none)', meaning: "The iOS app's bundle id (apns-topic)" },
  { name: 'SVC_APNS_URL', usedBy: 'server', default: 'https://api.push.apple.com', meaning: 'Base URL of APNs (HTTP/2)' },
];
