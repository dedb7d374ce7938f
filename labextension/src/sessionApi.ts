import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from './api';

/** One step of the co-pilot's plan. */
export interface IStep {
  id: string;
  episode: string;
  title: string;
  status: string;
  gate: string | null;
  columns: string[];
  reason: string;
  decision_id: string | null;
  checkpoint_id: string | null;
  cell_ids: string[];
  error: string | null;
  note: string;
}

/** One answer a decision offers. */
export interface IOption {
  id: string;
  label?: string;
  description?: string;
  risk?: string;
  recommended?: boolean;
}

/** A question only the domain expert can answer. */
export interface IDecision {
  id: string;
  step_id: string;
  gate: string;
  question: string;
  evidence: { [key: string]: unknown };
  options: IOption[];
  recommended: string | null;
  columns: string[];
  choice: string | null;
  by: string | null;
  rationale: string;
}

/** A kernel snapshot taken before a step. */
export interface ICheckpoint {
  id: string;
  step_id: string;
  label: string;
  created: string;
}

/** One transcript line: what happened and why. */
export interface ITranscriptEntry {
  at: string;
  kind: string;
  text: string;
}

/** A session as the server sends it (the subset the panel shows). */
export interface ISession {
  id: string;
  path: string;
  frame: string;
  state: string;
  plan: IStep[];
  decisions: IDecision[];
  checkpoints: ICheckpoint[];
  transcript: ITranscriptEntry[];
}

/** What starting a session asks for. */
export interface IStartOptions {
  path: string;
  frame: string;
  target: string;
  task: string;
  approve: string;
}

/** The session REST calls (the server, or a fake in tests). */
export interface ISessionSource {
  start(options: IStartOptions): Promise<ISession>;
  get(id: string): Promise<ISession>;
  decide(id: string, decisionId: string, choice: string, rationale: string): Promise<ISession>;
  undo(id: string, checkpoint: string): Promise<ISession>;
}

const json = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

/** The real source: the co-pilot's session endpoints. */
export const serverSessions: ISessionSource = {
  start: options => requestAPI<ISession>('sessions', json(options)),
  get: id => requestAPI<ISession>(`sessions/${id}`),
  decide: (id, decisionId, choice, rationale) =>
    requestAPI<ISession>(
      `sessions/${id}/decisions/${encodeURIComponent(decisionId)}`,
      json({ choice, rationale })
    ),
  undo: (id, checkpoint) => requestAPI<ISession>(`sessions/${id}/undo`, json({ checkpoint }))
};

/** The URL of a session's event socket, with the token as JupyterLab's own services add it. */
export function eventsUrl(
  id: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): string {
  let url = URLExt.join(settings.wsUrl, 'dcpilot', 'api', 'sessions', id, 'events');
  if (settings.token !== '' && settings.appendToken) {
    url += `?token=${encodeURIComponent(settings.token)}`;
  }
  return url;
}

/** Open a session's event socket. */
export function openEvents(
  id: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): WebSocket {
  return new settings.WebSocket(eventsUrl(id, settings));
}
