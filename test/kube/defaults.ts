import { isJsonObject, type JsonObject, type KubeObject } from './objects.ts';
import type { ResourceType } from './resource-types.ts';

/**
 * The defaults kube-apiserver fills in on create that clients commonly read back (replicas,
 * service cluster IPs, pod phase, namespace finalizers), and the status a create starts from when
 * the kind has a status subresource.
 */
function spec(obj: KubeObject): JsonObject {
  if (!isJsonObject(obj.spec)) obj.spec = {};
  return obj.spec as JsonObject;
}

function setDefault(target: JsonObject, key: string, value: JsonObject[string]): void {
  if (target[key] === undefined) target[key] = value;
}

export class ClusterIpAllocator {
  #next = 1;
  next(): string {
    const n = this.#next++;
    return `10.96.${Math.floor(n / 254) % 256}.${(n % 254) + 1}`;
  }
}

export function applyCreateDefaults(rt: ResourceType, obj: KubeObject, ips: ClusterIpAllocator): void {
  if (rt.crdName !== undefined) return;
  switch (`${rt.group}/${rt.kind}`) {
    case '/Namespace': {
      obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name ?? '' };
      setDefault(spec(obj), 'finalizers', ['kubernetes']);
      break;
    }
    case '/Pod': {
      const s = spec(obj);
      setDefault(s, 'restartPolicy', 'Always');
      setDefault(s, 'terminationGracePeriodSeconds', 30);
      setDefault(s, 'dnsPolicy', 'ClusterFirst');
      setDefault(s, 'schedulerName', 'default-scheduler');
      break;
    }
    case '/Service': {
      const s = spec(obj);
      setDefault(s, 'type', 'ClusterIP');
      setDefault(s, 'sessionAffinity', 'None');
      if (s.type !== 'ExternalName' && s.clusterIP === undefined) {
        const ip = ips.next();
        s.clusterIP = ip;
        s.clusterIPs = [ip];
      }
      if (Array.isArray(s.ports)) {
        for (const p of s.ports) {
          if (!isJsonObject(p)) continue;
          setDefault(p, 'protocol', 'TCP');
          if (p.port !== undefined) setDefault(p, 'targetPort', p.port);
        }
      }
      break;
    }
    case '/Secret':
      setDefault(obj as unknown as JsonObject, 'type', 'Opaque');
      break;
    case 'apps/Deployment': {
      const s = spec(obj);
      setDefault(s, 'replicas', 1);
      setDefault(s, 'revisionHistoryLimit', 10);
      setDefault(s, 'progressDeadlineSeconds', 600);
      setDefault(s, 'strategy', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
      break;
    }
    case 'apps/ReplicaSet':
    case 'apps/StatefulSet':
      setDefault(spec(obj), 'replicas', 1);
      break;
    case 'batch/Job': {
      const s = spec(obj);
      setDefault(s, 'parallelism', 1);
      setDefault(s, 'completions', 1);
      setDefault(s, 'backoffLimit', 6);
      break;
    }
  }
}

/** The status a new object starts with when clients may not set it (kinds with a status subresource). */
export function initialStatus(rt: ResourceType): JsonObject | undefined {
  if (rt.crdName !== undefined) return undefined;
  if (rt.group === '' && rt.kind === 'Pod') return { phase: 'Pending', qosClass: 'BestEffort' };
  if (rt.group === '' && rt.kind === 'Namespace') return { phase: 'Active' };
  if (rt.group === '' && rt.kind === 'Service') return { loadBalancer: {} };
  return {};
}
