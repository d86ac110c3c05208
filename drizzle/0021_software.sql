CREATE TABLE `device_software` (
	`id` text PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`org_id` text NOT NULL,
	`catalog_id` text,
	`name` text NOT NULL,
	`version` text,
	`vendor` text,
	`install_date` text,
	`install_location` text,
	`uninstall_string` text,
	`is_managed` integer DEFAULT false NOT NULL,
	`last_seen` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`catalog_id`) REFERENCES `software_catalog`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `device_software_device_idx` ON `device_software` (`device_id`);--> statement-breakpoint
CREATE INDEX `device_software_catalog_idx` ON `device_software` (`catalog_id`);--> statement-breakpoint
CREATE TABLE `software_catalog` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`partner_id` text,
	`name` text NOT NULL,
	`vendor` text NOT NULL,
	`category` text NOT NULL,
	`description` text,
	`platforms` text NOT NULL,
	`latest_version` text,
	`homepage` text,
	`license_type` text,
	`tags` text DEFAULT '[]' NOT NULL,
	`deprecated` integer DEFAULT false NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`partner_id`) REFERENCES `partners`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `software_catalog_org_idx` ON `software_catalog` (`org_id`);--> statement-breakpoint
CREATE INDEX `software_catalog_partner_idx` ON `software_catalog` (`partner_id`);--> statement-breakpoint
CREATE INDEX `software_catalog_name_idx` ON `software_catalog` (lower("name"));--> statement-breakpoint
CREATE TABLE `software_deployment_results` (
	`id` text PRIMARY KEY NOT NULL,
	`deployment_id` text NOT NULL,
	`device_id` text NOT NULL,
	`org_id` text NOT NULL,
	`command_id` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`message` text,
	`started_at` text,
	`completed_at` text,
	`exit_code` integer,
	`output` text,
	`error_message` text,
	`retry_count` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`deployment_id`) REFERENCES `software_deployments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `software_deployment_results_deployment_device_uq` ON `software_deployment_results` (`deployment_id`,`device_id`);--> statement-breakpoint
CREATE INDEX `software_deployment_results_command_idx` ON `software_deployment_results` (`command_id`);--> statement-breakpoint
CREATE INDEX `software_deployment_results_device_idx` ON `software_deployment_results` (`device_id`,`status`);--> statement-breakpoint
CREATE TABLE `software_deployments` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`software_id` text NOT NULL,
	`software_name` text NOT NULL,
	`software_version_id` text,
	`version` text,
	`deployment_type` text NOT NULL,
	`target_type` text DEFAULT 'devices' NOT NULL,
	`target_ids` text NOT NULL,
	`schedule_type` text NOT NULL,
	`scheduled_at` text,
	`options` text NOT NULL,
	`status` text NOT NULL,
	`requested_by` text NOT NULL,
	`request_reason` text,
	`created_by` text,
	`cancel_reason` text,
	`completed_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `software_deployments_org_created_idx` ON `software_deployments` (`org_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `software_deployments_software_idx` ON `software_deployments` (`software_id`);--> statement-breakpoint
CREATE TABLE `software_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`catalog_id` text NOT NULL,
	`version` text NOT NULL,
	`release_date` text NOT NULL,
	`release_notes` text,
	`download_url` text NOT NULL,
	`checksum` text,
	`file_size` integer,
	`supported_os` text NOT NULL,
	`architecture` text,
	`silent_install_arg` text,
	`silent_uninstall_arg` text,
	`is_latest` integer DEFAULT false NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`catalog_id`) REFERENCES `software_catalog`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `software_versions_catalog_version_uq` ON `software_versions` (`catalog_id`,`version`);--> statement-breakpoint
CREATE INDEX `software_versions_release_idx` ON `software_versions` (`catalog_id`,`release_date`);