CREATE TABLE `device_commands` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`device_id` text NOT NULL,
	`type` text NOT NULL,
	`payload` text DEFAULT '{}' NOT NULL,
	`secret_env` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`exit_code` integer,
	`stdout` text,
	`stderr` text,
	`error_message` text,
	`created_by` text,
	`sent_at` text,
	`completed_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `device_commands_device_status_idx` ON `device_commands` (`device_id`,`status`,`created_at`);--> statement-breakpoint
CREATE TABLE `custom_field_definitions` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`key` text NOT NULL,
	`name` text NOT NULL,
	`type` text DEFAULT 'text' NOT NULL,
	`allow_script_write` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `custom_field_definitions_org_key_unique` ON `custom_field_definitions` (`org_id`,`key`);--> statement-breakpoint
CREATE TABLE `script_executions` (
	`id` text PRIMARY KEY NOT NULL,
	`batch_id` text NOT NULL,
	`script_id` text,
	`script_name` text NOT NULL,
	`org_id` text NOT NULL,
	`device_id` text NOT NULL,
	`command_id` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`trigger_type` text DEFAULT 'manual' NOT NULL,
	`run_as` text NOT NULL,
	`parameters` text DEFAULT '{}' NOT NULL,
	`timeout_seconds` integer NOT NULL,
	`exit_code` integer,
	`stdout` text,
	`stderr` text,
	`error_message` text,
	`severity` text,
	`custom_fields_written` text,
	`custom_fields_rejected` text,
	`created_by` text,
	`started_at` text,
	`completed_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`script_id`) REFERENCES `scripts`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`command_id`) REFERENCES `device_commands`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `script_executions_script_idx` ON `script_executions` (`script_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `script_executions_command_idx` ON `script_executions` (`command_id`);--> statement-breakpoint
CREATE INDEX `script_executions_status_idx` ON `script_executions` (`status`);--> statement-breakpoint
CREATE TABLE `scripts` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`name` text NOT NULL,
	`description` text,
	`category` text,
	`os_types` text NOT NULL,
	`language` text NOT NULL,
	`content` text NOT NULL,
	`parameters` text DEFAULT '[]' NOT NULL,
	`timeout_seconds` integer DEFAULT 300 NOT NULL,
	`run_as` text DEFAULT 'system' NOT NULL,
	`is_system` integer DEFAULT false NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`exit_code_severity_mapping` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `scripts_org_idx` ON `scripts` (`org_id`,`updated_at`);