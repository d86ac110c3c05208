CREATE TABLE `device_diagnostic_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`org_id` text NOT NULL,
	`timestamp` text NOT NULL,
	`level` text NOT NULL,
	`component` text NOT NULL,
	`message` text NOT NULL,
	`fields` text,
	`agent_version` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `device_diagnostic_logs_device_time_idx` ON `device_diagnostic_logs` (`device_id`,`timestamp`,`id`);--> statement-breakpoint
CREATE TABLE `device_event_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`org_id` text NOT NULL,
	`timestamp` text NOT NULL,
	`level` text NOT NULL,
	`category` text NOT NULL,
	`source` text NOT NULL,
	`event_id` text,
	`message` text NOT NULL,
	`details` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_event_logs_device_source_event_uq` ON `device_event_logs` (`device_id`,`source`,`event_id`);--> statement-breakpoint
CREATE INDEX `device_event_logs_device_time_idx` ON `device_event_logs` (`device_id`,`timestamp`,`id`);