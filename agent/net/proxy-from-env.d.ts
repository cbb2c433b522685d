declare module 'proxy-from-env' {
  /** The proxy URL for `url` from *_PROXY / NO_PROXY in process.env, or '' for a direct connection. */
  export function getProxyForUrl(url: string | URL): string;
}
