export * from './tenancy.js';
export * from './identity.js';
export * from './audit.js';
export * from './platform.js';
export * from './keys.js';
export * from './devices.js';
export * from './access-reviews.js';
export * from './pam.js';
