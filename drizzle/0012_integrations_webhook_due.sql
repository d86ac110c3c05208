CREATE TABLE `integration_settings` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`kind` text NOT NULL,
	`config` text NOT NULL,
	`config_enc` text NOT NULL,
	`last_tested_at` text,
	`last_test_status` text,
	`last_test_error` text,
	`updated_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`updated_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `integration_settings_org_kind_idx` ON `integration_settings` (`org_id`,`kind`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE status IN ('pending', 'retrying');