import { z } from 'zod';
import { createOne, deleteById, getById, listPaged, updateById } from './builders.js';
import {
  DateTimeSchema,
  JsonObjectSchema,
  NameSchema as Name,
  PageQuerySchema,
  SuccessSchema,
  TimestampSchema,
  UuidSchema,
  timestampFields,
} from './common.js';
import { endpoint } from './endpoint.js';


// ---- Partners (01 §2.3) ----

export const PartnerTypeSchema = z.enum(['msp', 'enterprise', 'internal']);
export const PartnerPlanSchema = z.enum(['free', 'starter', 'community', 'pro', 'enterprise', 'unlimited']);
export const PartnerStatusSchema = z.enum(['pending', 'active', 'suspended', 'churned']);

const TimeOfDaySchema = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24h)');
const DayScheduleSchema = z.strictObject({ start: TimeOfDaySchema, end: TimeOfDaySchema, closed: z.boolean().optional() });
const WeekdaySchema = z.enum(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);

/** Names already found valid: building an Intl.DateTimeFormat costs more than the rest of a site's validation.
 * Bounded, as ICU accepts any letter case of a name. */
const knownTimezones = new Set<string>();
const MAX_KNOWN_TIMEZONES = 1000;

export const IanaTimezoneSchema = z
  .string()
  .min(1)
  .max(50)
  .refine((tz) => {
    if (knownTimezones.has(tz)) return true;
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
    } catch {
      return false;
    }
    if (knownTimezones.size < MAX_KNOWN_TIMEZONES) knownTimezones.add(tz);
    return true;
  }, 'unknown IANA time zone');

/** 01 §2.3 partner settings: only these keys, merged (not replaced) on update. */
export const PartnerSettingsSchema = z.strictObject({
  timezone: IanaTimezoneSchema.optional(),
  dateFormat: z.enum(['MM/DD/YYYY', 'DD/MM/YYYY', 'YYYY-MM-DD']).optional(),
  timeFormat: z.enum(['12h', '24h']).optional(),
  language: z.literal('en').optional(),
  businessHours: z
    .strictObject({
      preset: z.enum(['24/7', 'business', 'extended', 'custom']).optional(),
      custom: z.partialRecord(WeekdaySchema, DayScheduleSchema).optional(),
    })
    .optional(),
  contact: z
    .strictObject({
      name: z.string().max(255).optional(),
      email: z.email().max(255).optional(),
      phone: z.string().max(50).optional(),
      website: z.string().max(255).optional(),
    })
    .optional(),
  /** svc extension (docs/api-notes.md): members must use MFA; disabling it is refused (01 §4.5). */
  requireMfa: z.boolean().optional(),
  /** The partner policy of 01 §4.9: "when partner policy enforces step-up an under-assured approve gives 403". */
  pamStepUpRequired: z.boolean().optional(),
});
export type PartnerSettings = z.infer<typeof PartnerSettingsSchema>;

export const SlugSchema = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lowercase letters, digits and single hyphens only');

export const PartnerSchema = z.object({
  id: UuidSchema,
  name: z.string(),
  slug: z.string(),
  type: PartnerTypeSchema,
  plan: PartnerPlanSchema,
  status: PartnerStatusSchema,
  maxOrganizations: z.number().int().nullable(),
  maxDevices: z.number().int().nullable(),
  settings: JsonObjectSchema,
  ssoConfig: JsonObjectSchema.nullable(),
  billingEmail: z.string().nullable(),
  ...timestampFields,
  deletedAt: TimestampSchema.nullable(),
});
export type Partner = z.infer<typeof PartnerSchema>;

const Cap = z.number().int().min(0).max(10_000_000);

export const PartnerCreateSchema = z.strictObject({
  name: Name,
  slug: SlugSchema,
  type: PartnerTypeSchema.optional(),
  plan: PartnerPlanSchema.optional(),
  status: PartnerStatusSchema.optional(),
  maxOrganizations: Cap.nullable().optional(),
  maxDevices: Cap.nullable().optional(),
  billingEmail: z.email().max(255).nullable().optional(),
  settings: PartnerSettingsSchema.optional(),
  ssoConfig: JsonObjectSchema.nullable().optional(),
});

export const PartnerUpdateSchema = PartnerCreateSchema.partial();

export const PartnerSelfUpdateSchema = z.strictObject({
  name: Name.optional(),
  billingEmail: z.email().max(255).nullable().optional(),
  settings: PartnerSettingsSchema.optional(),
});

// ---- Organizations (01 §2.4) ----

export const OrgTypeSchema = z.enum(['customer', 'internal']);
export const OrgStatusSchema = z.enum(['active', 'suspended', 'trial', 'churned']);

export const OrganizationSchema = z.object({
  id: UuidSchema,
  partnerId: UuidSchema,
  name: z.string(),
  slug: z.string(),
  type: OrgTypeSchema,
  status: OrgStatusSchema,
  maxDevices: z.number().int().nullable(),
  settings: JsonObjectSchema,
  ssoConfig: JsonObjectSchema.nullable(),
  billingContact: JsonObjectSchema.nullable(),
  contractStart: TimestampSchema.nullable(),
  contractEnd: TimestampSchema.nullable(),
  ...timestampFields,
  deletedAt: TimestampSchema.nullable(),
});
export type Organization = z.infer<typeof OrganizationSchema>;

const OrganizationFields = {
  name: Name,
  slug: SlugSchema,
  type: OrgTypeSchema.optional(),
  status: OrgStatusSchema.optional(),
  maxDevices: Cap.nullable().optional(),
  contractStart: DateTimeSchema.nullable().optional(),
  contractEnd: DateTimeSchema.nullable().optional(),
  settings: JsonObjectSchema.optional(),
  ssoConfig: JsonObjectSchema.nullable().optional(),
  billingContact: JsonObjectSchema.nullable().optional(),
};

export const OrganizationCreateSchema = z.strictObject({
  ...OrganizationFields,
  partnerId: UuidSchema.optional(),
});

/** partnerId is immutable (01 §2.4): accepted only when it equals the current value. */
export const OrganizationUpdateSchema = z.strictObject({
  ...z.object(OrganizationFields).partial().shape,
  partnerId: UuidSchema.optional(),
});

// ---- Sites (01 §2.5) ----

export const SiteSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  address: JsonObjectSchema.nullable(),
  timezone: z.string(),
  contact: JsonObjectSchema.nullable(),
  settings: JsonObjectSchema,
  ...timestampFields,
});
export type Site = z.infer<typeof SiteSchema>;

export const SiteCreateSchema = z.strictObject({
  orgId: UuidSchema,
  name: Name,
  timezone: IanaTimezoneSchema.optional(),
  address: JsonObjectSchema.nullable().optional(),
  contact: JsonObjectSchema.nullable().optional(),
  settings: JsonObjectSchema.optional(),
});

/** orgId is immutable (01 §2.5): accepted only when it equals the current value. */
export const SiteUpdateSchema = SiteCreateSchema.partial();

export const OrganizationListQuerySchema = PageQuerySchema.extend({ partnerId: UuidSchema.optional() });
export const SiteListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional(),
  organizationId: UuidSchema.optional(),
});

export const DeletedSchema = SuccessSchema;

export const tenancy = {
  listPartners: listPaged('/orgs/partners', PageQuerySchema, PartnerSchema, { callerScopes: ['system'] },
    'List partners'),
  createPartner: createOne('/orgs/partners', PartnerCreateSchema, PartnerSchema, { callerScopes: ['system'] },
    'Create a partner (active unless a status is given)'),
  getMyPartner: endpoint({
    method: 'GET',
    path: '/orgs/partners/me',
    responses: { 200: PartnerSchema },
    auth: { callerScopes: ['partner'], allowInactivePartner: true },
    summary: "The caller's own partner",
  }),
  updateMyPartner: endpoint({
    method: 'PATCH',
    path: '/orgs/partners/me',
    body: PartnerSelfUpdateSchema,
    responses: { 200: PartnerSchema },
    auth: { callerScopes: ['partner'], allowInactivePartner: true, permission: 'organizations:write' },
    summary: "Update the caller's own partner (settings are merged)",
  }),
  getPartner: getById('/orgs/partners/:id', PartnerSchema, { callerScopes: ['system'] }, 'Get a partner'),
  updatePartner: updateById('/orgs/partners/:id', PartnerUpdateSchema, PartnerSchema, { callerScopes: ['system'] },
    'Update a partner (settings are merged)'),
  deletePartner: deleteById('/orgs/partners/:id', DeletedSchema, { callerScopes: ['system'] }, 'Soft-delete a partner'),
  listAccessibleOrganizations: endpoint({
    method: 'GET',
    path: '/orgs/',
    responses: { 200: z.object({ data: z.array(OrganizationSchema) }) },
    auth: {},
    summary: 'Every organization the caller can reach, ordered by name (unpaged)',
  }),
  listOrganizations: listPaged('/orgs/organizations', OrganizationListQuerySchema, OrganizationSchema,
    { callerScopes: ['partner', 'system'], permission: 'organizations:read' }, 'List organizations'),
  createOrganization: createOne('/orgs/organizations', OrganizationCreateSchema, OrganizationSchema,
    { callerScopes: ['partner', 'system'], permission: 'organizations:write' }, 'Create an organization'),
  getOrganization: getById('/orgs/organizations/:id', OrganizationSchema,
    { callerScopes: ['partner', 'system'], permission: 'organizations:read' }, 'Get an organization'),
  updateOrganization: updateById('/orgs/organizations/:id', OrganizationUpdateSchema, OrganizationSchema,
    { callerScopes: ['partner', 'system'], permission: 'organizations:write' }, 'Update an organization'),
  deleteOrganization: deleteById('/orgs/organizations/:id', DeletedSchema,
    { callerScopes: ['partner', 'system'], permission: 'organizations:delete' }, 'Soft-delete an organization'),
  listSites: listPaged('/orgs/sites', SiteListQuerySchema, SiteSchema, { permission: 'sites:read' }, 'List sites'),
  createSite: createOne('/orgs/sites', SiteCreateSchema, SiteSchema, { permission: 'sites:write' }, 'Create a site'),
  getSite: getById('/orgs/sites/:id', SiteSchema, { permission: 'sites:read' }, 'Get a site'),
  updateSite: updateById('/orgs/sites/:id', SiteUpdateSchema, SiteSchema, { permission: 'sites:write' },
    'Update a site'),
  deleteSite: deleteById('/orgs/sites/:id', DeletedSchema, { permission: 'sites:delete' },
    'Delete a site (hard delete)'),
} as const;
