/**
 * The version of vendor-agent: what the agent announces in Hello and its User-Agent, what
 * `--version` of the agent, the driver and `vendorctl` prints, and the API document's
 * `info.version`. Kept equal to package.json's `version` (a test checks).
 */
export const VERSION = '0.1.0';
