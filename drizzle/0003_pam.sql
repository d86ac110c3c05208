CREATE TABLE `elevation_audit_events` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`elevation_request_id` text NOT NULL,
	`event_type` text NOT NULL,
	`actor` text NOT NULL,
	`actor_user_id` text,
	`occurred_at` text NOT NULL,
	`created_at` text NOT NULL,
	`details` text DEFAULT '{}' NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`elevation_request_id`) REFERENCES `elevation_requests`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `elevation_audit_events_export_idx` ON `elevation_audit_events` (`org_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `elevation_audit_events_request_idx` ON `elevation_audit_events` (`elevation_request_id`);--> statement-breakpoint
CREATE TABLE `elevation_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`device_id` text NOT NULL,
	`site_id` text,
	`flow_type` text NOT NULL,
	`status` text NOT NULL,
	`enforcement_status` text,
	`subject_username` text,
	`subject_user_id` text,
	`subject_groups` text,
	`requester_user_id` text,
	`reason` text,
	`requested_duration_minutes` integer,
	`target_executable_path` text,
	`target_executable_hash` text,
	`target_executable_signer` text,
	`target_executable_signer_thumbprint` text,
	`target_publisher` text,
	`parent_image` text,
	`command_line` text,
	`tool_name` text,
	`risk_tier` integer,
	`action_digest` text,
	`execution_id` text,
	`observed_at` text NOT NULL,
	`requested_at` text NOT NULL,
	`matched_policy_name` text,
	`pam_rule_id` text,
	`pam_rule_name` text,
	`decision_source` text,
	`decided_assurance_level` text,
	`decided_via` text,
	`approved_at` text,
	`approved_by_user_id` text,
	`denied_at` text,
	`denied_by_user_id` text,
	`denial_reason` text,
	`expires_at` text,
	`revoked_at` text,
	`revoked_by_user_id` text,
	`revoked_reason` text,
	`expired_at` text,
	`revision` integer DEFAULT 1 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `elevation_requests_org_requested_idx` ON `elevation_requests` (`org_id`,`requested_at`,`id`);--> statement-breakpoint
CREATE INDEX `elevation_requests_status_expiry_idx` ON `elevation_requests` (`status`,`expires_at`);--> statement-breakpoint
CREATE INDEX `elevation_requests_device_idx` ON `elevation_requests` (`device_id`);--> statement-breakpoint
CREATE INDEX `elevation_requests_site_idx` ON `elevation_requests` (`site_id`);--> statement-breakpoint
CREATE TABLE `pam_approver_devices` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`credential_id` text NOT NULL,
	`public_key` text NOT NULL,
	`counter` integer DEFAULT 0 NOT NULL,
	`transports` text DEFAULT '[]' NOT NULL,
	`created_at` text NOT NULL,
	`last_used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pam_approver_devices_credential_unique` ON `pam_approver_devices` (`credential_id`);--> statement-breakpoint
CREATE INDEX `pam_approver_devices_user_idx` ON `pam_approver_devices` (`user_id`);--> statement-breakpoint
CREATE TABLE `pam_org_config` (
	`org_id` text PRIMARY KEY NOT NULL,
	`default_unmatched_verdict` text DEFAULT 'require_approval' NOT NULL,
	`default_approval_duration_minutes` integer,
	`updated_by` text,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `pam_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`site_id` text,
	`name` text NOT NULL,
	`verdict` text NOT NULL,
	`suspended_verdict` text,
	`priority` integer DEFAULT 100 NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`match_signer` text,
	`match_signer_group_id` text,
	`match_signer_thumbprint` text,
	`match_hash` text,
	`match_path_glob` text,
	`match_parent_image` text,
	`match_command_line` text,
	`match_user` text,
	`match_ad_group` text,
	`match_tool_name` text,
	`match_risk_tier` integer,
	`match_negate` text,
	`time_window` text,
	`approval_duration_minutes` integer,
	`reapproved_at` text,
	`reapproved_by_user_id` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`site_id`) REFERENCES `sites`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`match_signer_group_id`) REFERENCES `pam_signer_groups`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `pam_rules_org_order_idx` ON `pam_rules` (`org_id`,`priority`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `pam_rules_signer_group_idx` ON `pam_rules` (`match_signer_group_id`);--> statement-breakpoint
CREATE INDEX `pam_rules_site_idx` ON `pam_rules` (`site_id`);--> statement-breakpoint
CREATE TABLE `pam_signer_groups` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`signers` text DEFAULT '[]' NOT NULL,
	`thumbprints` text DEFAULT '[]' NOT NULL,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pam_signer_groups_org_name_unique` ON `pam_signer_groups` (`org_id`,`name`);--> statement-breakpoint
CREATE TABLE `pam_webauthn_challenges` (
	`id` text PRIMARY KEY NOT NULL,
	`purpose` text NOT NULL,
	`user_id` text NOT NULL,
	`elevation_request_id` text,
	`challenge` text NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`elevation_request_id`) REFERENCES `elevation_requests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `pam_webauthn_challenges_challenge_unique` ON `pam_webauthn_challenges` (`challenge`);--> statement-breakpoint
CREATE INDEX `pam_webauthn_challenges_expiry_idx` ON `pam_webauthn_challenges` (`expires_at`);--> statement-breakpoint
-- 01 §4.9 / §9, release 0.112.0: rules that auto-approved are suspended to require_approval until a
-- PATCH {reapprove:true} restores them. Runs once, with this migration; it changes nothing when run again.
UPDATE `pam_rules` SET `suspended_verdict` = 'auto_approve', `verdict` = 'require_approval' WHERE `verdict` = 'auto_approve';
