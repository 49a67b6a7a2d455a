import { emailNotifier } from './email.js';
import type { NotifierDefinition } from './types.js';
import { webhookNotifier } from './webhook.js';

/** Every notification channel type, as the API, the worker, the docs and the browser know them. */
export const notifiers: NotifierDefinition[] = [webhookNotifier as unknown as NotifierDefinition, emailNotifier as unknown as NotifierDefinition];

export const notifierByType = (type: string): NotifierDefinition | undefined => notifiers.find((n) => n.type === type);
export const notifierTypes = notifiers.map((n) => n.type);
