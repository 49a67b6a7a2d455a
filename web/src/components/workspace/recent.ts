/** The Workspaces this browser opened lately (a convenience: the server has no such list). */
import type { Workspace } from '../../types.js';

export interface Recent {
  id: string;
  filename: string;
  expires_at: string;
}
const RECENT_KEY = 'geoflow.recent-workspaces';

export function recentWorkspaces(): Recent[] {
  try {
    const list = JSON.parse(localStorage.getItem(RECENT_KEY) ?? '[]') as Recent[];
    return list.filter((r) => Date.parse(r.expires_at) > Date.now());
  } catch {
    return [];
  }
}

export function remember(ws: Workspace): void {
  try {
    const list = [{ id: ws.id, filename: ws.filename, expires_at: ws.expires_at }, ...recentWorkspaces().filter((r) => r.id !== ws.id)].slice(0, 8);
    localStorage.setItem(RECENT_KEY, JSON.stringify(list));
  } catch {
    // storage may be disabled; the list is a convenience
  }
}
