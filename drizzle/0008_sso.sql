CREATE TABLE `sso_exchange_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`code_hash` text NOT NULL,
	`user_id` text NOT NULL,
	`tokens_enc` text NOT NULL,
	`client_challenge` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sso_exchange_codes_code_unique` ON `sso_exchange_codes` (`code_hash`);--> statement-breakpoint
CREATE TABLE `sso_identities` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`external_id` text NOT NULL,
	`email` text NOT NULL,
	`profile` text NOT NULL,
	`tokens_enc` text,
	`token_expires_at` text,
	`last_login_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`provider_id`) REFERENCES `sso_providers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sso_identities_provider_subject_unique` ON `sso_identities` (`provider_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `sso_identities_user_idx` ON `sso_identities` (`user_id`);--> statement-breakpoint
CREATE TABLE `sso_login_states` (
	`id` text PRIMARY KEY NOT NULL,
	`provider_id` text NOT NULL,
	`state_hash` text NOT NULL,
	`nonce` text NOT NULL,
	`code_verifier_enc` text NOT NULL,
	`return_to` text NOT NULL,
	`client_challenge` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`provider_id`) REFERENCES `sso_providers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sso_login_states_state_unique` ON `sso_login_states` (`state_hash`);--> statement-breakpoint
CREATE TABLE `sso_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`preset` text,
	`issuer` text,
	`client_id` text,
	`client_secret_enc` text,
	`scopes` text NOT NULL,
	`attribute_mapping` text NOT NULL,
	`auto_provision` integer DEFAULT true NOT NULL,
	`default_role_id` text,
	`allowed_domains` text,
	`enforce_sso` integer DEFAULT false NOT NULL,
	`trusts_idp_mfa` integer DEFAULT false NOT NULL,
	`status` text DEFAULT 'inactive' NOT NULL,
	`authorization_url` text,
	`token_url` text,
	`user_info_url` text,
	`jwks_url` text,
	`created_by` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`default_role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `sso_providers_org_idx` ON `sso_providers` (`org_id`);