/**
 * The environment a process of its own needs to reach an embedded table over loopback TCP: the
 * endpoint and the credentials AWS would supply (dynalite checks none), and the table's name when given.
 */
export function tableProcessEnv(table: { endpoint?: string | undefined; tableName?: string }): Record<string, string> {
  // Only a table that listens on TCP (`tcp: true`) can be reached from another process.
  if (table.endpoint === undefined) throw new Error('the embedded table has no TCP endpoint: start it with tcp: true');
  return {
    ...(table.tableName === undefined ? {} : { VENDOR_TABLE_NAME: table.tableName }),
    VENDOR_DYNAMODB_ENDPOINT: table.endpoint,
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  };
}
