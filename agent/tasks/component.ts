import type { ComponentFactory } from '../component.ts';

/** Runs the queue checks of the task budget and applies reloaded `tasks.*` limits. */
export const budgetComponent: ComponentFactory = (ctx) => {
  let loop: Promise<void> | undefined;
  const controller = new AbortController();
  return {
    name: 'task budget',
    async start(signal) {
      signal.addEventListener('abort', () => controller.abort(), { once: true });
      loop = ctx.budget.run(controller.signal);
    },
    async stop() {
      controller.abort();
      await loop;
    },
    onConfigChange(change) {
      if (change.sections.includes('tasks')) ctx.budget.updateSettings(change.next.tasks);
    },
  };
};
