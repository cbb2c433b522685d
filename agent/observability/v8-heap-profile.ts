import type { heap } from '@datadog/pprof';

/** Chrome DevTools' `.heapprofile` file (Memory tab: Load), as the inspector's HeapProfiler writes it. */
export interface DevToolsHeapProfile {
  head: DevToolsHeapNode;
  samples: { size: number; nodeId: number; ordinal: number }[];
}

interface DevToolsHeapNode {
  callFrame: { functionName: string; scriptId: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  id: number;
  children: DevToolsHeapNode[];
}

type SampledNode = ReturnType<typeof heap.v8Profile>;

const bytesOf = (node: SampledNode): number =>
  node.allocations.reduce((sum, a) => sum + ('sizeBytes' in a ? a.sizeBytes * a.count : a.inuseSpaceBytes), 0);

/**
 * The sampling heap profiler's tree in the DevTools format. The same V8 sampler feeds the pprof heap
 * profile, and V8 runs one at a time, so both formats are read from it rather than from a second one.
 */
export function toDevToolsHeapProfile(root: SampledNode): DevToolsHeapProfile {
  let nextId = 1;
  const convert = (node: SampledNode, isRoot: boolean): DevToolsHeapNode => ({
    callFrame: {
      functionName: isRoot ? '(root)' : (node.name ?? ''),
      scriptId: String(node.scriptId),
      url: node.scriptName,
      // V8's sampled positions count from 1, DevTools' from 0.
      lineNumber: (node.lineNumber ?? 0) - 1,
      columnNumber: (node.columnNumber ?? 0) - 1,
    },
    selfSize: bytesOf(node),
    id: nextId++,
    children: node.children.map((child: SampledNode) => convert(child, false)),
  });
  return { head: convert(root, true), samples: [] };
}
