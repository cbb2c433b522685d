/** The agent's version, announced in Hello; kept equal to package.json's `version` (a test checks). */
export const AGENT_VERSION = '0.1.0';
