/** Sources, Destinations, Jobs and Runs: one chunk, loaded when one of these pages is first opened. */
export { connectionEditPage, connectionsPage } from './connections.js';
export { jobPage } from './job.js';
export { jobEditPage } from './job-editor.js';
export { jobsPage } from './jobs.js';
export { runPage } from './run.js';
