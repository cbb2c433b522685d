/**
 * The connection's settings, named exactly as in `vendor-agent.yml`
 * (docs/agent-config.md#connection-to-the-control-plane, plus `kubernetes.reconnectTimeoutMs` and `timeoutSeconds`). The agent's
 * configuration schema produces this object; keys left out take the defaults below, which are the
 * defaults that page lists.
 */
export interface TokenCommandSettings {
  command: string;
  args?: string[];
  /** `raw`: the command prints the token. `json` or empty: it prints `{"token": "..."}`. */
  format?: '' | 'raw' | 'json';
  /** Run the command again every this many seconds; 0 runs it once (and again after a refusal). */
  refreshIntervalSeconds?: number;
}

export interface DriverTlsSettings {
  serverName?: string;
  insecureSkipVerify?: boolean;
  clientCertFile?: string;
  /** When absent, the key is read from `clientCertFile`. */
  clientKeyFile?: string;
  clientKeyFilePassword?: string;
  /** When absent, the system trust store (and Node's bundled roots) verify the driver. */
  cacertFile?: string;
}

export interface ResponseRetrySettings {
  enabled?: boolean;
  maxRetries?: number;
  backOffMs?: number;
}

export interface DriverSettings {
  /** `host:port` of the driver or of a gRPC proxy in front of it. */
  grpc?: string;
  auth?: { token?: string; tokenCommand?: TokenCommandSettings };
  /** Unset: a keepalive ping every 60 s. 0: never. n: every n seconds. */
  keepAliveHeartbeatSeconds?: number;
  keepAliveTimeOutSeconds?: number;
  insecure?: boolean;
  noProxy?: boolean;
  responseRetries?: ResponseRetrySettings;
  tls?: DriverTlsSettings;
}

export interface ConnectionSettings {
  driver?: DriverSettings;
  kubernetes?: { reconnectTimeoutMs?: number };
  /** Longest wait for the driver's answer (welcome, acknowledgement); 0: no limit. */
  timeoutSeconds?: number;
}

export const CONNECTION_DEFAULTS = {
  grpc: 'spin-clouddriver-grpc:9091',
  keepAliveHeartbeatSeconds: 60,
  insecure: false,
  noProxy: false,
  responseRetries: { enabled: true, maxRetries: 1200, backOffMs: 3000 },
  reconnectTimeoutMs: 5000,
  timeoutSeconds: 0,
} as const;
