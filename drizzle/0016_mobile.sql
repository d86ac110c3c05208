CREATE TABLE `mobile_devices` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`device_id` text NOT NULL,
	`platform` text NOT NULL,
	`model` text,
	`os_version` text,
	`app_version` text,
	`fcm_token` text,
	`apns_token` text,
	`notifications_enabled` integer DEFAULT true NOT NULL,
	`alert_severities` text NOT NULL,
	`quiet_hours` text,
	`last_active_at` text,
	`status` text DEFAULT 'active' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mobile_devices_device_id_unique` ON `mobile_devices` (`device_id`);--> statement-breakpoint
CREATE INDEX `mobile_devices_user_idx` ON `mobile_devices` (`user_id`);--> statement-breakpoint
CREATE TABLE `mobile_push_notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`mobile_device_id` text NOT NULL,
	`user_id` text NOT NULL,
	`alert_id` text,
	`title` text NOT NULL,
	`body` text NOT NULL,
	`data` text DEFAULT '{}' NOT NULL,
	`platform` text NOT NULL,
	`message_id` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`error_message` text,
	`sent_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`mobile_device_id`) REFERENCES `mobile_devices`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mobile_push_notifications_device_alert_unique` ON `mobile_push_notifications` (`mobile_device_id`,`alert_id`);--> statement-breakpoint
CREATE INDEX `mobile_push_notifications_user_idx` ON `mobile_push_notifications` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `mobile_push_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`token` text NOT NULL,
	`platform` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mobile_push_tokens_token_unique` ON `mobile_push_tokens` (`token`);--> statement-breakpoint
CREATE INDEX `mobile_push_tokens_user_idx` ON `mobile_push_tokens` (`user_id`);