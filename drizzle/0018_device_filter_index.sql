DROP INDEX `devices_org_os_idx`;--> statement-breakpoint
CREATE INDEX `devices_filter_idx` ON `devices` (`org_id`,`os_type`,`status`,`device_role`,`last_seen_at`,`site_id`,`hostname`,`tags`,`id`);