CREATE TABLE `api_key_hit_seconds` (
	`key_id` text NOT NULL,
	`second` integer NOT NULL,
	`hits` integer NOT NULL,
	`first_at` integer NOT NULL,
	`last_at` integer NOT NULL,
	PRIMARY KEY(`key_id`, `second`),
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `api_key_hit_seconds_last_at_idx` ON `api_key_hit_seconds` (`last_at`);--> statement-breakpoint
INSERT INTO `api_key_hit_seconds` (`key_id`, `second`, `hits`, `first_at`, `last_at`)
  SELECT `key_id`, `at` / 1000, count(*), min(`at`), max(`at`) FROM `api_key_hits` GROUP BY `key_id`, `at` / 1000;--> statement-breakpoint
DROP TABLE `api_key_hits`;