CREATE TABLE `saved_filters` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`conditions` text NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `saved_filters_org_idx` ON `saved_filters` (`org_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `device_group_members` (
	`group_id` text NOT NULL,
	`device_id` text NOT NULL,
	`is_pinned` integer DEFAULT false NOT NULL,
	`pinned_at` text,
	`added_at` text NOT NULL,
	`added_by` text,
	PRIMARY KEY(`group_id`, `device_id`),
	FOREIGN KEY (`group_id`) REFERENCES `device_groups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `device_group_members_device_idx` ON `device_group_members` (`device_id`);--> statement-breakpoint
CREATE TABLE `device_group_membership_log` (
	`id` text PRIMARY KEY NOT NULL,
	`group_id` text NOT NULL,
	`device_id` text NOT NULL,
	`action` text NOT NULL,
	`reason` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`group_id`) REFERENCES `device_groups`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `device_group_membership_log_group_idx` ON `device_group_membership_log` (`group_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `device_groups` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`site_id` text,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`rules` text,
	`filter_conditions` text,
	`filter_fields_used` text DEFAULT '[]' NOT NULL,
	`parent_id` text,
	`evaluated_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `device_groups_org_idx` ON `device_groups` (`org_id`,`name`);--> statement-breakpoint
CREATE INDEX `device_groups_parent_idx` ON `device_groups` (`parent_id`);--> statement-breakpoint
ALTER TABLE `devices` ADD `os_build` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `uptime_seconds` integer;--> statement-breakpoint
ALTER TABLE `devices` ADD `is_headless` integer;--> statement-breakpoint
ALTER TABLE `devices` ADD `device_role` text DEFAULT 'unknown' NOT NULL;--> statement-breakpoint
ALTER TABLE `devices` ADD `watchdog_status` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `last_seen_ip` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `quarantined_at` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `hw_manufacturer` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `hw_model` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `hw_serial_number` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `hw_cpu_model` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `hw_gpu_model` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `hw_cpu_cores` integer;--> statement-breakpoint
ALTER TABLE `devices` ADD `hw_ram_total_mb` real;--> statement-breakpoint
ALTER TABLE `devices` ADD `hw_disk_total_gb` real;--> statement-breakpoint
ALTER TABLE `devices` ADD `net_ip_address` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `net_public_ip` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `net_mac_address` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `cpu_percent` real;--> statement-breakpoint
ALTER TABLE `devices` ADD `ram_percent` real;--> statement-breakpoint
ALTER TABLE `devices` ADD `disk_percent` real;--> statement-breakpoint
ALTER TABLE `devices` ADD `software_names` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `devices` ADD `pending_patch_count` integer;--> statement-breakpoint
ALTER TABLE `devices` ADD `reboot_required` integer;--> statement-breakpoint
CREATE INDEX `devices_org_status_idx` ON `devices` (`org_id`,`status`);--> statement-breakpoint
CREATE INDEX `devices_org_last_seen_idx` ON `devices` (`org_id`,`last_seen_at`);--> statement-breakpoint
CREATE INDEX `devices_org_os_idx` ON `devices` (`org_id`,`os_type`);