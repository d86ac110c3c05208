CREATE TABLE `sso_saml_replays` (
	`id` text PRIMARY KEY NOT NULL,
	`provider_id` text NOT NULL,
	`message_id` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	FOREIGN KEY (`provider_id`) REFERENCES `sso_providers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sso_saml_replays_message_unique` ON `sso_saml_replays` (`provider_id`,`message_id`);--> statement-breakpoint
CREATE INDEX `sso_saml_replays_expiry_idx` ON `sso_saml_replays` (`expires_at`);--> statement-breakpoint
ALTER TABLE `sso_providers` ADD `sso_url` text;--> statement-breakpoint
ALTER TABLE `sso_providers` ADD `idp_entity_id` text;--> statement-breakpoint
ALTER TABLE `sso_providers` ADD `idp_certificate` text;