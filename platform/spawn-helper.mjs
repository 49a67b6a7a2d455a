// The spawner's helper process (platform/spawner.ts): starts the child processes its parent asks
// for, passes their output back and kills them when told. Plain JavaScript with no imports beyond
// Node's own, so it starts small: a fork of this process costs about a millisecond where a fork
// of the worker (half a gigabyte resident) costs 15–40 ms with its event loop stopped.
import { spawn } from 'node:child_process';

const children = new Map();

/** Sends a message; `resume` runs once the channel took it (the child's output waits until then). */
function send(message, resume) {
  if (!process.connected) return;
  process.send(message, undefined, undefined, () => resume?.());
}

function start({ id, file, args, cwd, env, detached, stdout, stderr }) {
  let child;
  try {
    child = spawn(file, args, { cwd, env, detached, stdio: ['ignore', stdout, stderr] });
  } catch (error) {
    send({ op: 'error', id, message: String(error?.message ?? error), code: error?.code ?? null });
    return;
  }
  children.set(id, child);
  child.once('spawn', () => send({ op: 'spawned', id, pid: child.pid }));
  child.once('error', (error) => send({ op: 'error', id, message: String(error?.message ?? error), code: error?.code ?? null }));
  for (const stream of ['stdout', 'stderr']) {
    const readable = child[stream];
    if (!readable) continue;
    // Backpressure: a child that prints faster than the parent reads is paused, not buffered here.
    readable.on('data', (chunk) => {
      readable.pause();
      send({ op: stream, id, chunk }, () => readable.resume());
    });
  }
  child.once('close', (code, signal) => {
    children.delete(id);
    send({ op: 'close', id, code, signal });
  });
}

function kill({ id, pid, signal, group }) {
  try {
    // A group outlives its leader (what bubblewrap left behind): killed by the pid the parent kept.
    if (group) {
      const leader = pid ?? children.get(id)?.pid;
      if (leader) process.kill(-leader, signal);
    } else children.get(id)?.kill(signal);
  } catch {
    // already gone
  }
}

process.on('message', (message) => {
  if (message.op === 'spawn') start(message);
  else if (message.op === 'kill') kill(message);
});
// The parent is gone (exited or killed): so is this process. The sandbox's bubblewrap dies with
// its parent, as it did when the parent started it itself.
process.on('disconnect', () => process.exit(0));
