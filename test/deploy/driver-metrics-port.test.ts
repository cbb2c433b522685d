/**
 * The deployed driver's metrics port (docs/metrics.md): enabled by the file baked into the image, on
 * the port infra/ names, and exposed by the image. That the public load balancer forwards gRPC only
 * (443 to DEPLOYED.driverPort) is checked by test/deploy/sst-config.test.ts.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDriverFile } from '../../driver/config.ts';
import { DEPLOYED } from '../../infra/control-plane.ts';
import { dockerfile } from './dockerfile.ts';

const ROOT = resolve(import.meta.dirname, '../..');

describe('the deployed driver serves metrics', () => {
  it('enables them on DEPLOYED.driverMetricsPort, which the image exposes', () => {
    const file = parseDriverFile(readFileSync(resolve(ROOT, 'deploy/driver/vendor-driver.aws.yml'), 'utf8'), 'vendor-driver.aws.yml');
    expect(file.metrics).toEqual({ enabled: true, host: '0.0.0.0', port: DEPLOYED.driverMetricsPort });
    expect(dockerfile(resolve(ROOT, DEPLOYED.driverDockerfile)).exposed()).toContain(DEPLOYED.driverMetricsPort);
    expect(DEPLOYED.driverMetricsPort).not.toBe(DEPLOYED.driverPort);
  });
});
