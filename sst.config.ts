// The control plane on AWS (SST v3): `npx sst@3 deploy --stage <stage>`; docs/deploy.md walks
// through it. SST runs this file itself; the project does not depend on SST. Types for
// `npm run typecheck` come from infra/sst-globals.d.ts, and test/deploy/sst-config.test.ts
// evaluates it with a recording stand-in for SST's globals.
export default $config({
  app(input) {
    const production = input.stage === 'production';
    return {
      name: 'vendor-agent',
      home: 'aws',
      // Production keeps its table and secrets when the app is removed, and cannot be removed by accident.
      removal: production ? 'retain' : 'remove',
      protect: production,
    };
  },
  async run() {
    // SST refuses top-level imports in this file: the infrastructure is imported here.
    // The web console is built first: the API Lambda carries it (copyFiles, docs/deploy.md#the-web-console).
    // Paths from the project folder SST runs in: this file is bundled before it runs.
    const { buildConsole } = await import('./scripts/build-console.ts');
    await buildConsole(`${process.cwd()}/functions/console/dist`, `${process.cwd()}/functions/console/client`);
    const { controlPlane } = await import('./infra/control-plane.ts');
    return controlPlane({ stage: $app.stage, env: process.env });
  },
});
