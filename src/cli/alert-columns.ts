/** Table columns of the alert channel, escalation policy and notification commands. */
export const CHANNEL_COLUMNS = ['id', 'name', 'type', 'orgId', 'enabled', 'lastTestStatus', 'lastTestedAt', 'updatedAt'];
export const POLICY_COLUMNS = ['id', 'name', 'orgId', 'steps', 'updatedAt'];
export const NOTIFICATION_COLUMNS = ['id', 'type', 'priority', 'title', 'read', 'createdAt'];
