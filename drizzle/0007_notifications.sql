CREATE TABLE `alert_escalations` (
	`id` text PRIMARY KEY NOT NULL,
	`alert_id` text NOT NULL,
	`org_id` text NOT NULL,
	`policy_id` text NOT NULL,
	`step` integer NOT NULL,
	`channel_ids` text NOT NULL,
	`payload` text NOT NULL,
	`due_at` text NOT NULL,
	`status` text DEFAULT 'scheduled' NOT NULL,
	`fired_at` text,
	`cancelled_at` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alert_escalations_step_unique` ON `alert_escalations` (`alert_id`,`step`);--> statement-breakpoint
CREATE INDEX `alert_escalations_due_idx` ON `alert_escalations` (`status`,`due_at`);--> statement-breakpoint
CREATE TABLE `escalation_policies` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`steps` text DEFAULT '[]' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `escalation_policies_org_idx` ON `escalation_policies` (`org_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `notification_channels` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`config_sealed` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`last_tested_at` text,
	`last_test_status` text,
	`throttle_max_per_window` integer,
	`throttle_window_seconds` integer DEFAULT 3600 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notification_channels_org_idx` ON `notification_channels` (`org_id`,`updated_at`);--> statement-breakpoint
CREATE TABLE `notification_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`alert_id` text NOT NULL,
	`org_id` text NOT NULL,
	`channel_id` text,
	`channel_name` text NOT NULL,
	`channel_type` text NOT NULL,
	`step` integer DEFAULT 0 NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`error_message` text,
	`sent_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`channel_id`) REFERENCES `notification_channels`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `notification_deliveries_alert_idx` ON `notification_deliveries` (`alert_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `notification_deliveries_channel_idx` ON `notification_deliveries` (`channel_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `notification_deliveries_send_unique` ON `notification_deliveries` (`alert_id`,`channel_id`,`step`);--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`org_id` text,
	`type` text NOT NULL,
	`priority` text DEFAULT 'normal' NOT NULL,
	`title` text NOT NULL,
	`message` text DEFAULT '' NOT NULL,
	`link` text,
	`metadata` text DEFAULT '{}' NOT NULL,
	`read` integer DEFAULT false NOT NULL,
	`read_at` text,
	`source_key` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notifications_user_created_idx` ON `notifications` (`user_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `notifications_user_source_unique` ON `notifications` (`user_id`,`source_key`);