import path from 'node:path';
import { Client, Connection, ScheduleOverlapPolicy } from '@temporalio/client';
import { startTemporal } from '../scripts/local-services.js';
import { freePort } from '../devservers/ports.js';
import { treeCpuSeconds } from './processes.js';

/**
 * What Temporal alone does with `schedules` one-minute Schedules due on the same second, on this
 * machine: a dev server started exactly as the service's (scripts/local-services.ts), Schedules
 * whose workflow no worker runs (so nothing of geoflow's runs), and each fire's start lag (the
 * Schedule's `takenAt` against its `scheduledAt`) over `fires` minutes. It is the floor under
 * the service's own lateness: what a fire costs before any of geoflow's code runs.
 */
export async function temporalFloor(
  schedules: number,
  fires: number,
): Promise<{ fires: number; p50: number; p99: number; max: number; cpuSecondsPerMinute: number }> {
  const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');
  const temporal = await startTemporal(dataDir, await freePort());
  const connection = await Connection.connect({ address: temporal.address });
  try {
    const client = new Client({ connection });
    for (let i = 0; i < schedules; i += 20)
      await Promise.all(
        Array.from({ length: Math.min(20, schedules - i) }, (_, k) =>
          client.schedule.create({
            scheduleId: `floor-${i + k}`,
            spec: { intervals: [{ every: '1 minute' }] },
            // Every fire starts a workflow, though the earlier ones never ran.
            policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL, catchupWindow: '1 minute' },
            action: { type: 'startWorkflow', workflowType: 'nobodyRunsThis', taskQueue: 'no-worker', workflowExecutionTimeout: '30 seconds' },
          }),
        ),
      );
    const cpu = () => treeCpuSeconds(temporal.process.pid!);
    // From the next minute boundary on, `fires` whole minutes, and 15 s for the last fire's starts.
    const from = Date.now() + 60_000 - (Date.now() % 60_000) - 1000;
    const cpu0 = cpu();
    await new Promise((r) => setTimeout(r, from + 1000 + fires * 60_000 - 45_000 - Date.now()));
    const cpuSecondsPerMinute = (cpu() - cpu0) / fires;
    const lags: number[] = [];
    for (let i = 0; i < schedules; i += 20) {
      const described = await Promise.all(
        Array.from({ length: Math.min(20, schedules - i) }, (_, k) => client.schedule.getHandle(`floor-${i + k}`).describe()),
      );
      for (const d of described)
        for (const a of d.info.recentActions) if (a.scheduledAt.getTime() >= from) lags.push(a.takenAt.getTime() - a.scheduledAt.getTime());
    }
    lags.sort((a, b) => a - b);
    const at = (q: number) => lags[Math.min(lags.length - 1, Math.floor(lags.length * q))] ?? Number.NaN;
    return { fires: lags.length, p50: at(0.5), p99: at(0.99), max: lags.at(-1) ?? Number.NaN, cpuSecondsPerMinute: +cpuSecondsPerMinute.toFixed(2) };
  } finally {
    await connection.close();
    temporal.stop();
  }
}
