/** Table columns of the software commands (03 §4.3). */
export const CATALOG_COLUMNS = ['id', 'name', 'vendor', 'category', 'platforms', 'latestVersion', 'licenseType', 'deprecated'];
export const VERSION_COLUMNS = ['id', 'version', 'releaseDate', 'isLatest', 'supportedPlatforms', 'sizeMB', 'downloadUrl'];
export const DEPLOYMENT_COLUMNS = ['id', 'softwareName', 'action', 'status', 'version', 'deviceIds', 'requestedBy', 'requestedAt', 'scheduledAt', 'completedAt'];
