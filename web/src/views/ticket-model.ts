import type { Delivery, MergeRequest } from './delivery.tsx';
import type { Ticket } from './tickets-model.ts';

/** A ticket's pod as `GET /tickets/:slug` lists it (delivery work), or as a pod event carries it. */
export interface TicketPod {
  key: string;
  status: string;
  agent_slug: string;
  created_at: string;
  delivery?: Delivery | null;
  updated_at?: string;
}

/** The ticket page's ticket: its fields and what the delivery and people work add when present. */
export interface TicketDetail extends Ticket {
  pods?: TicketPod[];
  merge_requests?: MergeRequest[];
}

/** The prompt a "Run an agent" form starts with: the ticket, as an agent needs it. */
export function ticketPrompt(ticket: Pick<Ticket, 'slug' | 'title' | 'description'>): string {
  return [`Work on ticket ${ticket.slug}: ${ticket.title}`, ticket.description ?? ''].filter(Boolean).join('\n\n');
}

/** Inserts or updates a pod in a newest-first list. */
export function upsertPod(pods: TicketPod[], pod: TicketPod): TicketPod[] {
  if (pods.some((p) => p.key === pod.key)) return pods.map((p) => (p.key === pod.key ? { ...p, ...pod } : p));
  return [pod, ...pods];
}
