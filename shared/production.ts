/**
 * Production mode outside the Lambda: `VENDOR_ENV=production`. The API and the driver refuse
 * there what is meant for local use only (the API's admin token, the driver's fleet-wide agent
 * token, a driver listening in plaintext on a network address).
 */
export function isProductionEnv(env: NodeJS.ProcessEnv): boolean {
  return env.VENDOR_ENV === 'production';
}
