CREATE TABLE `psa_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`provider` text NOT NULL,
	`name` text NOT NULL,
	`credentials_enc` text,
	`settings` text DEFAULT '{}' NOT NULL,
	`sync_settings` text DEFAULT '{"lastTestedAt":null,"testStatus":null,"testMessage":null}' NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`last_sync_at` text,
	`last_sync_status` text,
	`last_sync_error` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `psa_connections_org_idx` ON `psa_connections` (`org_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `psa_ticket_mappings` (
	`id` text PRIMARY KEY NOT NULL,
	`connection_id` text NOT NULL,
	`org_id` text NOT NULL,
	`alert_id` text,
	`device_id` text,
	`rule_id` text,
	`external_ticket_id` text NOT NULL,
	`external_ticket_url` text,
	`title` text NOT NULL,
	`status` text NOT NULL,
	`open` integer DEFAULT true NOT NULL,
	`last_sync_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`connection_id`) REFERENCES `psa_connections`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `psa_ticket_mappings_external_idx` ON `psa_ticket_mappings` (`connection_id`,`external_ticket_id`);--> statement-breakpoint
CREATE INDEX `psa_ticket_mappings_alert_idx` ON `psa_ticket_mappings` (`connection_id`,`alert_id`);--> statement-breakpoint
CREATE INDEX `psa_ticket_mappings_org_idx` ON `psa_ticket_mappings` (`org_id`,`updated_at`);