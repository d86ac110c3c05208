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