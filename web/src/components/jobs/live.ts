/**
 * Polling for pages that follow a Run: calls `tick` every `intervalMs` while it answers true,
 * never two at once, paused while the tab is hidden, stopped for good by `stop()` (page left).
 */
export interface Live {
  /** Polls again now and keeps polling (after Run Now, or when a Run was seen active). */
  wake(): void;
  stop(): void;
}

export function live(tick: () => Promise<boolean>, intervalMs = 1500): Live {
  let timer: number | undefined;
  let running = false;
  let stopped = false;
  let again = false;

  async function run() {
    timer = undefined;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    let more = false;
    try {
      more = await tick();
    } catch {
      more = true; // a failed poll (network blip) tries again
    } finally {
      running = false;
    }
    if (stopped) return;
    if (more || again) schedule();
    again = false;
  }

  function schedule() {
    if (timer === undefined && !stopped) timer = window.setTimeout(() => void run(), document.hidden ? intervalMs * 4 : intervalMs);
  }

  return {
    wake() {
      if (stopped) return;
      if (timer !== undefined) window.clearTimeout(timer);
      timer = undefined;
      void run();
    },
    stop() {
      stopped = true;
      if (timer !== undefined) window.clearTimeout(timer);
    },
  };
}
