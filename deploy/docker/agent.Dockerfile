# syntax=docker/dockerfile:1
# The agent image: agent/ and shared/ with the production dependencies, nothing else (the agent ships
# alone). Node 24 runs the TypeScript sources directly (type stripping), so there is no build step.
#
#   docker build -f deploy/docker/agent.Dockerfile -t vendor-agent:0.1.0 .      (from the repository root)
#
# The profiler (@datadog/pprof, docs/agent-config.md#profiling) is a native addon that its package
# ships prebuilt for linux x64 and arm64, glibc and musl, per Node ABI: `npm ci` compiles nothing, and
# the addon links only against libraries Node itself needs (libstdc++, libgcc_s, glibc), which the
# slim image has (test/deploy/agent-image-native.test.ts).
#
# It runs as the unprivileged `node` user (uid 1000) and writes nothing outside /tmp, so it suits a
# read-only root filesystem with an emptyDir on /tmp (secrets resolved from `encryptedFile:` go there).
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    VENDOR_HEALTHCHECK_URL=http://127.0.0.1:8082/livez
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
# package.json carries "type": "module", which makes Node load the .ts files as ES modules.
COPY package.json ./
COPY shared ./shared
COPY agent ./agent
USER node
# 8082: health server (server.port), 8008: Prometheus metrics (prometheus.port).
EXPOSE 8082 8008
# /livez answers while the process runs; the health server must listen where this reaches it
# (server.host 0.0.0.0 in the shipped configurations). Kubernetes uses its own probes instead.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.VENDOR_HEALTHCHECK_URL,{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# A small young generation (2 MiB semi-spaces): the agent's heap holds little that lives long, and
# with V8's default the old generation's limit stays within a young generation of its size, so it
# marks the whole heap several times a second under a stream of watch events (docs/cache.md).
ENV NODE_OPTIONS="--max-semi-space-size=2"
ENTRYPOINT ["node", "agent/main.ts"]
CMD ["--config", "/opt/vendor/config/vendor-agent.yml"]
