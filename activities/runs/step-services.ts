import type { Services } from '../../application/services.js';

/** What the step machinery and every step activity use of the worker's services. */
export type StepServices = Pick<Services, 'store' | 'clock' | 'log' | 'files' | 'config'>;
