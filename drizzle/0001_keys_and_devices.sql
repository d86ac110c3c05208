CREATE TABLE `api_key_hits` (
	`key_id` text NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `api_key_hits_key_at_idx` ON `api_key_hits` (`key_id`,`at`);--> statement-breakpoint
CREATE INDEX `api_key_hits_at_idx` ON `api_key_hits` (`at`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`key_prefix` text NOT NULL,
	`key_hash` text NOT NULL,
	`scopes` text DEFAULT '[]' NOT NULL,
	`expires_at` text,
	`rate_limit` integer DEFAULT 1000 NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`last_used_at` text,
	`usage_count` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_org_idx` ON `api_keys` (`org_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `enrollment_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`site_id` text,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`usage_count` integer DEFAULT 0 NOT NULL,
	`max_usage` integer,
	`expires_at` text NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `enrollment_keys_hash_unique` ON `enrollment_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `enrollment_keys_org_idx` ON `enrollment_keys` (`org_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `devices` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`partner_id` text NOT NULL,
	`site_id` text,
	`agent_id` text NOT NULL,
	`agent_token_hash` text NOT NULL,
	`hostname` text NOT NULL,
	`display_name` text,
	`os_type` text NOT NULL,
	`os_version` text NOT NULL,
	`architecture` text NOT NULL,
	`agent_version` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`custom_fields` text DEFAULT '{}' NOT NULL,
	`hardware_info` text,
	`network_info` text,
	`last_metrics` text,
	`last_seen_at` text,
	`enrolled_at` text NOT NULL,
	`last_user` text,
	`enrollment_key_id` text,
	`decommissioned_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `devices_agent_id_unique` ON `devices` (`agent_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `devices_agent_token_hash_unique` ON `devices` (`agent_token_hash`);--> statement-breakpoint
CREATE INDEX `devices_org_idx` ON `devices` (`org_id`,`hostname`);--> statement-breakpoint
CREATE INDEX `devices_site_idx` ON `devices` (`site_id`);--> statement-breakpoint
CREATE INDEX `devices_partner_idx` ON `devices` (`partner_id`,`status`);