/**
 * Runs `refresh` every `intervalMs` while the tab is visible: polling stops while it is hidden and
 * refreshes at once when it is shown again. `stop()` ends it (on leaving the page).
 */
export interface Poller {
  stop(): void;
  paused(): boolean;
  setPaused(paused: boolean): void;
}

export function startPolling(refresh: () => Promise<void>, intervalMs: number): Poller {
  let timer: number | undefined;
  let stopped = false;
  let userPaused = false;
  const schedule = () => {
    window.clearTimeout(timer);
    if (!stopped && !userPaused && document.visibilityState === 'visible') timer = window.setTimeout(tick, intervalMs);
  };
  const tick = () => {
    refresh().finally(schedule);
  };
  const onVisibility = () => {
    if (document.visibilityState === 'visible' && !userPaused && !stopped) tick();
    else window.clearTimeout(timer);
  };
  document.addEventListener('visibilitychange', onVisibility);
  schedule();
  return {
    stop() {
      stopped = true;
      window.clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    },
    paused: () => userPaused,
    setPaused(paused) {
      userPaused = paused;
      if (paused) window.clearTimeout(timer);
      else schedule();
    },
  };
}
