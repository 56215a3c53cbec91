/**
 * The API's shapes as the dashboard reads them, taken from the client generated from the OpenAPI
 * document (src/client/schema.ts, `npm run openapi`), so the dashboard's types cannot drift from
 * what the server answers (docs/dashboard.md "How the assets are built and served").
 */
import type { components } from '../../src/client/schema.ts';

type Schemas = components['schemas'];

export type Pod = Schemas['Pod'];
export type PodItem = Schemas['PodListItem'];
export type Usage = Pod['usage'];
export type Actor = NonNullable<Pod['created_by']>;
export type Delivery = Schemas['Delivery'];
export type Runner = Schemas['Runner'];
export type Loop = Schemas['Loop'];
export type Run = Schemas['Run'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type Ticket = Schemas['Ticket'];
export type BoardTicket = Schemas['BoardTicket'];
export type User = Schemas['User'];
export type Channel = Schemas['Channel'];
