import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ServerCredentials } from '@grpc/grpc-js';
import { VendorError } from '../shared/errors.ts';
import type { DriverGrpcConfig } from './config.ts';

function readConfigFile(key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new VendorError('invalid_input', `grpc.tls.${key}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`, {
      issues: [{ path: `grpc.tls.${key}`, message: 'cannot be read' }],
    });
  }
}

/**
 * The server's transport credentials: plaintext without `grpc.tls`, TLS with it, and mutual TLS
 * (client certificates required and checked against `clientCaFile`) when a client CA is given.
 * grpc-js takes only unencrypted keys, so a password-protected key is decrypted here, in memory.
 */
export function serverCredentials(tls: DriverGrpcConfig['grpc']['tls']): ServerCredentials {
  if (tls === undefined) return ServerCredentials.createInsecure();
  const certChain = readConfigFile('certFile', tls.certFile);
  let privateKey = readConfigFile('keyFile', tls.keyFile);
  if (tls.keyFilePassword !== undefined) {
    try {
      privateKey = Buffer.from(
        createPrivateKey({ key: privateKey, passphrase: tls.keyFilePassword }).export({ type: 'pkcs8', format: 'pem' }),
      );
    } catch {
      throw new VendorError('invalid_input', `grpc.tls.keyFile: cannot decrypt ${tls.keyFile} with grpc.tls.keyFilePassword`, {
        issues: [{ path: 'grpc.tls.keyFilePassword', message: 'does not decrypt grpc.tls.keyFile' }],
      });
    }
  }
  const clientCa = tls.clientCaFile === undefined ? null : readConfigFile('clientCaFile', tls.clientCaFile);
  return ServerCredentials.createSsl(clientCa, [{ cert_chain: certChain, private_key: privateKey }], clientCa !== null);
}
