# syntax=docker/dockerfile:1
# The driver image: driver/ and shared/ with the production dependencies and the deployed
# vendor-driver.yml. Node 24 runs the TypeScript sources directly (type stripping), no build step.
#
#   docker build -f deploy/docker/driver.Dockerfile -t vendor-driver:0.1.0 .     (from the repository root)
#
# `sst deploy` builds it for the ECS service (sst.config.ts). It runs as the unprivileged `node`
# user and writes nothing to its filesystem. The table comes from the SST link (or
# VENDOR_TABLE_NAME); agents' tokens are issued per identity and kept in the table. The stack sets
# VENDOR_ENV=production on the service, which refuses fleet-wide tokens (docs/deploy.md).
# SST passes the service's links (SST_RESOURCE_*) as build arguments too: no ARG of those names is
# declared, so they never reach a layer or the image history.
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    VENDOR_DRIVER_CONFIG=/opt/vendor/config/vendor-driver.yml \
    VENDOR_HEALTHCHECK_TARGET=127.0.0.1:9091
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
# package.json carries "type": "module", which makes Node load the .ts files as ES modules.
COPY package.json ./
COPY shared ./shared
COPY driver ./driver
COPY deploy/driver/vendor-driver.aws.yml /opt/vendor/config/vendor-driver.yml
USER node
# 9091: gRPC for agents and grpc.health.v1 (grpc.port); 9464: Prometheus metrics (metrics.port, docs/metrics.md).
EXPOSE 9091 9464
# The standard gRPC health check, in plain text as the load balancer speaks to the task.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const g=require('@grpc/grpc-js'),h=require('grpc-health-check');const C=g.makeGenericClientConstructor(h.service,'Health');new C(process.env.VENDOR_HEALTHCHECK_TARGET,g.credentials.createInsecure()).check({service:''},{deadline:Date.now()+4000},(e,r)=>process.exit(!e&&(r.status==='SERVING'||r.status===1)?0:1))"]
ENTRYPOINT ["node", "driver/main.ts"]
