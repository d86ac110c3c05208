export * from './tenancy.js';
export * from './identity.js';
export * from './audit.js';
export * from './platform.js';
