CREATE TABLE `alert_correlations` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`alert_id` text NOT NULL,
	`related_alert_id` text NOT NULL,
	`reason` text NOT NULL,
	`confidence` real NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`alert_id`) REFERENCES `alerts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`related_alert_id`) REFERENCES `alerts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alert_correlations_pair_unique` ON `alert_correlations` (`alert_id`,`related_alert_id`);--> statement-breakpoint
CREATE INDEX `alert_correlations_related_idx` ON `alert_correlations` (`related_alert_id`);--> statement-breakpoint
CREATE INDEX `alert_correlations_org_idx` ON `alert_correlations` (`org_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `alert_evaluator_state` (
	`key` text PRIMARY KEY NOT NULL,
	`evaluated_through` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `alert_metric_samples` (
	`id` integer PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`org_id` text NOT NULL,
	`metric` text NOT NULL,
	`service_name` text DEFAULT '' NOT NULL,
	`value` real,
	`text_value` text,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `alert_metric_samples_window_idx` ON `alert_metric_samples` (`metric`,`service_name`,`device_id`,`at`);--> statement-breakpoint
CREATE INDEX `alert_metric_samples_at_idx` ON `alert_metric_samples` (`at`);--> statement-breakpoint
CREATE TABLE `alert_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`template_id` text NOT NULL,
	`template_name` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`severity` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`targets` text NOT NULL,
	`conditions` text NOT NULL,
	`cooldown_minutes` integer NOT NULL,
	`notification_channel_ids` text,
	`escalation_policy_id` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`template_id`) REFERENCES `alert_templates`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `alert_rules_org_idx` ON `alert_rules` (`org_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `alert_rules_template_idx` ON `alert_rules` (`template_id`);--> statement-breakpoint
CREATE TABLE `alert_templates` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text,
	`name` text NOT NULL,
	`description` text,
	`category` text DEFAULT 'Custom' NOT NULL,
	`severity` text NOT NULL,
	`conditions` text DEFAULT '{}' NOT NULL,
	`targets` text DEFAULT '{"scope":"organization"}' NOT NULL,
	`default_cooldown_minutes` integer DEFAULT 15 NOT NULL,
	`title_template` text NOT NULL,
	`message_template` text NOT NULL,
	`built_in` integer DEFAULT false NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `alert_templates_org_idx` ON `alert_templates` (`org_id`,`name`);--> statement-breakpoint
CREATE TABLE `alerts` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`site_id` text,
	`rule_id` text,
	`rule_name` text,
	`template_id` text,
	`device_id` text,
	`device_name` text,
	`status` text DEFAULT 'active' NOT NULL,
	`severity` text NOT NULL,
	`title` text NOT NULL,
	`message` text NOT NULL,
	`context` text DEFAULT '{}' NOT NULL,
	`triggered_at` text NOT NULL,
	`acknowledged_at` text,
	`acknowledged_by` text,
	`resolved_at` text,
	`resolved_by` text,
	`resolution_note` text,
	`suppressed_until` text,
	`cooldown_until` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `alerts_org_triggered_idx` ON `alerts` (`org_id`,`triggered_at`);--> statement-breakpoint
CREATE INDEX `alerts_rule_device_idx` ON `alerts` (`rule_id`,`device_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `alerts_open_rule_device_unique` ON `alerts` (`rule_id`,`device_id`) WHERE status IN ('active', 'acknowledged', 'suppressed');