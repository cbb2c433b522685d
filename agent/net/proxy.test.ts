import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestProxy, type TestProxy } from '../../test/support/proxy.ts';
import { channelOptions } from '../connection/channel.ts';
import { applyClusterProxy, clusterProxy, driverProxy, normalizeProxyEnv } from './proxy.ts';

const VARIABLES = ['http_proxy', 'https_proxy', 'no_proxy', 'grpc_proxy', 'no_grpc_proxy', 'all_proxy'];

/** Clears every proxy variable, then sets the given ones (vitest puts them all back afterwards). */
function proxyEnv(vars: Record<string, string>): void {
  for (const name of VARIABLES) {
    vi.stubEnv(name, undefined);
    vi.stubEnv(name.toUpperCase(), undefined);
  }
  for (const [k, v] of Object.entries(vars)) vi.stubEnv(k, v);
}

afterEach(() => {
  vi.unstubAllEnvs();
});

const driver = { grpc: 'driver.example.com:443', insecure: false, noProxy: false };
const cluster = { kubernetesNoProxy: false, accountNoProxy: false };

describe('proxy decisions', () => {
  it('uses HTTPS_PROXY for TLS targets and HTTP_PROXY for plain ones, in either case', () => {
    proxyEnv({ HTTPS_PROXY: 'http://secure-proxy:3128', http_proxy: 'http://plain-proxy:3128' });
    expect(driverProxy(driver).proxy).toBe('http://secure-proxy:3128');
    expect(driverProxy({ ...driver, insecure: true }).proxy).toBe('http://plain-proxy:3128');
    expect(clusterProxy('https://10.0.0.1:6443', cluster).proxy).toBe('http://secure-proxy:3128');
  });

  it('NO_PROXY bypasses the proxy for the hosts it lists', () => {
    proxyEnv({ HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: '.example.com,10.0.0.1' });
    expect(driverProxy(driver)).toEqual({ proxy: undefined, reason: 'no proxy variable applies to this host' });
    expect(clusterProxy('https://10.0.0.1:6443', cluster).proxy).toBeUndefined();
    expect(clusterProxy('https://10.0.0.2:6443', cluster).proxy).toBe('http://proxy:3128');
  });

  it('driver.noProxy, kubernetes.noProxy and an account noProxy bypass the variables', () => {
    proxyEnv({ HTTPS_PROXY: 'http://proxy:3128' });
    expect(driverProxy({ ...driver, noProxy: true })).toEqual({ proxy: undefined, reason: 'driver.noProxy is true' });
    expect(clusterProxy('https://k8s:6443', { ...cluster, kubernetesNoProxy: true })).toEqual({ proxy: undefined, reason: 'kubernetes.noProxy is true' });
    expect(clusterProxy('https://k8s:6443', { ...cluster, accountNoProxy: true })).toEqual({ proxy: undefined, reason: 'noProxy of the account is true' });
    // Bypassing one side leaves the other on the proxy.
    expect(driverProxy(driver).proxy).toBe('http://proxy:3128');
    expect(clusterProxy('https://k8s:6443', cluster).proxy).toBe('http://proxy:3128');
  });

  it('a proxy-url written in the kubeconfig stays the choice for that cluster', () => {
    proxyEnv({});
    expect(clusterProxy('https://k8s:6443', { ...cluster, kubernetesNoProxy: true, kubeconfigProxyUrl: 'socks5://jump:1080' }).proxy).toBe('socks5://jump:1080');
  });

  it('copies upper-case variables to the lower-case names grpc-js reads, without overriding', () => {
    proxyEnv({ HTTPS_PROXY: 'http://upper:1', http_proxy: 'http://lower:2', HTTP_PROXY: 'http://upper:2', NO_PROXY: 'a.b' });
    expect(normalizeProxyEnv().sort()).toEqual(['https_proxy', 'no_proxy']);
    expect([process.env['https_proxy'], process.env['http_proxy'], process.env['no_proxy']]).toEqual(['http://upper:1', 'http://lower:2', 'a.b']);
  });
});

describe('proxies on real connections', () => {
  let proxy: TestProxy;
  beforeEach(async () => {
    proxy = await startTestProxy();
  });
  afterEach(async () => {
    await proxy.close();
  });

  async function grpcServer(): Promise<{ server: grpc.Server; target: string }> {
    const server = new grpc.Server();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    return { server, target: `127.0.0.1:${port}` };
  }

  async function dialDriver(target: string, noProxy: boolean): Promise<void> {
    const client = new grpc.Client(target, grpc.credentials.createInsecure(), channelOptions({ grpc: target, insecure: true, noProxy }));
    try {
      await new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + 10_000, (e) => (e ? reject(e) : resolve())));
    } finally {
      client.close();
    }
  }

  it('the driver connection tunnels through HTTPS_PROXY, and goes direct with driver.noProxy', async () => {
    const { server, target } = await grpcServer();
    try {
      proxyEnv({ HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url });
      normalizeProxyEnv();
      await dialDriver(target, false);
      expect(proxy.seen).toEqual([target]);
      await dialDriver(target, true);
      expect(proxy.seen).toEqual([target]);
    } finally {
      server.forceShutdown();
    }
  });

  it('the driver connection goes direct when NO_PROXY lists the host', async () => {
    const { server, target } = await grpcServer();
    try {
      proxyEnv({ HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' });
      normalizeProxyEnv();
      await dialDriver(target, false);
      expect(proxy.seen).toEqual([]);
    } finally {
      server.forceShutdown();
    }
  });

  it('cluster requests go through the proxy unless kubernetes.noProxy or the account noProxy is set', async () => {
    const api: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'NamespaceList', apiVersion: 'v1', metadata: {}, items: [{ metadata: { name: 'default' } }] }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const server = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    proxyEnv({ HTTP_PROXY: proxy.url });
    const list = async (options: { kubernetesNoProxy: boolean; accountNoProxy: boolean }) => {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server, skipTLSVerify: true }],
        users: [{ name: 'u', token: 'not-a-real-token' }],
        contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
        currentContext: 'ctx',
      });
      const decision = applyClusterProxy(kc, options);
      const names = (await kc.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name);
      return { decision, names };
    };
    try {
      const proxied = await list(cluster);
      expect(proxied).toEqual({ decision: { proxy: proxy.url, reason: 'proxy environment variables' }, names: ['default'] });
      expect(proxy.seen).toHaveLength(1);
      expect((await list({ ...cluster, kubernetesNoProxy: true })).names).toEqual(['default']);
      expect((await list({ ...cluster, accountNoProxy: true })).names).toEqual(['default']);
      expect(proxy.seen).toHaveLength(1);
    } finally {
      await new Promise((r) => api.close(r));
      api.closeAllConnections();
    }
  });
});
