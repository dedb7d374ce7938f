import { ISignal, Signal } from '@lumino/signaling';

import { APIError } from './api';
import {
  IDecision,
  ISession,
  ISessionSource,
  IStartOptions,
  openEvents,
  serverSessions
} from './sessionApi';

/** A notebook request from the server (run_cell, insert_markdown, delete_cells). */
export interface IHostRequest {
  type: string;
  request_id: string;
  [key: string]: unknown;
}

/** Answers the server's notebook requests (the notebook bridge, or a fake in tests). */
export interface IHostHandler {
  handle(request: IHostRequest, path: string): Promise<{ [key: string]: unknown }>;
}

/** The socket the model talks through (a WebSocket, or a fake in tests). */
export interface IEventSocket {
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: unknown) => void) | null;
  send(data: string): void;
  close(): void;
}

const HOST_REQUESTS = ['run_cell', 'insert_markdown', 'delete_cells'];
/** Coalesce bursts of events into one fetch of the whole session. */
const SYNC_DELAY_MS = 150;

/**
 * The co-pilot session of the panel: the server's session dict, kept current from the event
 * socket, and the actions the expert takes on it (decide, undo).
 */
export class SessionModel {
  constructor(
    readonly source: ISessionSource = serverSessions,
    readonly host: IHostHandler | null = null,
    readonly connect: (id: string) => IEventSocket = id =>
      openEvents(id) as unknown as IEventSocket
  ) {}

  get changed(): ISignal<this, void> {
    return this._changed;
  }
  get session(): ISession | null {
    return this._session;
  }
  get error(): string | null {
    return this._error;
  }
  /** True while a request of the panel or a step of the co-pilot is in flight. */
  get running(): boolean {
    const s = this._session;
    return (
      this._pending > 0 ||
      (!!s && (s.state === 'running' || s.plan.some(step => step.status === 'running')))
    );
  }
  /** Decisions still waiting for the expert. */
  get openDecisions(): IDecision[] {
    const s = this._session;
    if (!s) {
      return [];
    }
    // a decision whose step was undone or replaced asks nothing any more
    const pending = new Set(
      s.plan.filter(st => st.status === 'awaiting_decision' || st.status === 'proposed').map(st => st.id)
    );
    return s.decisions.filter(d => d.choice === null && pending.has(d.step_id));
  }
  /** False once the event socket closed (the panel can reconnect). */
  get connected(): boolean {
    return this._socket !== null;
  }

  /** Listen to the current session's events again (after the socket closed). */
  reconnect(): void {
    if (this._session) {
      this._error = null;
      this._listen(this._session.id);
      this._changed.emit();
    }
  }

  /** Start (or rejoin) the notebook's session and listen to its events. */
  async start(options: IStartOptions): Promise<void> {
    const session = await this._call(() => this.source.start(options));
    if (session) {
      this._listen(session.id);
    }
  }

  /** Answer a decision. */
  async decide(decisionId: string, choice: string, rationale = ''): Promise<void> {
    const id = this._session?.id;
    if (id) {
      await this._call(() => this.source.decide(id, decisionId, choice, rationale));
    }
  }

  /** Restore the state before a checkpoint's step. */
  async undo(checkpoint: string): Promise<void> {
    const id = this._session?.id;
    if (id) {
      await this._call(() => this.source.undo(id, checkpoint));
    }
  }

  /** Apply one message of the event socket to the session. */
  apply(message: { type?: string; [key: string]: any }): void {
    if (message.type === 'session') {
      this._session = message.session as ISession;
      this._changed.emit();
      return;
    }
    const s = this._session;
    if (!s) {
      return;
    }
    switch (message.type) {
      case 'state':
        s.state = String(message.state);
        break;
      case 'step': {
        const step = s.plan.find(st => st.id === message.step);
        if (step) {
          step.status = String(message.status);
        }
        break;
      }
      case 'decision':
      case 'awaiting_decision': {
        const decision = message.decision as IDecision;
        const index = s.decisions.findIndex(d => d.id === decision.id);
        if (index >= 0) {
          s.decisions[index] = decision;
        } else {
          s.decisions.push(decision);
        }
        break;
      }
      case 'transcript':
        s.transcript.push(message.entry);
        break;
    }
    this._changed.emit();
    this._scheduleSync();
  }

  /** Stop listening (the panel follows another notebook, or closes). */
  dispose(): void {
    window.clearTimeout(this._timer);
    if (this._socket) {
      this._socket.onclose = null;
      this._socket.close();
      this._socket = null;
    }
  }

  private _listen(id: string): void {
    this.dispose();
    const socket = this.connect(id);
    this._socket = socket;
    socket.onmessage = event => {
      let message: any;
      try {
        message = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (HOST_REQUESTS.includes(message?.type) && message.request_id) {
        void this._answer(socket, message as IHostRequest);
      } else {
        this.apply(message);
      }
    };
    socket.onclose = () => {
      if (this._socket === socket) {
        this._socket = null;
        this._error = 'The connection to the co-pilot closed.';
        this._changed.emit();
      }
    };
  }

  private async _answer(socket: IEventSocket, request: IHostRequest): Promise<void> {
    let answer: { [key: string]: unknown };
    try {
      if (!this.host || !this._session) {
        throw new Error('no notebook to run in');
      }
      answer = await this.host.handle(request, this._session.path);
    } catch (reason) {
      answer = { type: 'host_error', message: describe(reason) };
    }
    socket.send(JSON.stringify({ ...answer, request_id: request.request_id }));
  }

  private _scheduleSync(): void {
    window.clearTimeout(this._timer);
    this._timer = window.setTimeout(() => void this._sync(), SYNC_DELAY_MS);
  }

  private async _sync(): Promise<void> {
    const id = this._session?.id;
    if (!id) {
      return;
    }
    try {
      const session = await this.source.get(id);
      if (this._session?.id === id) {
        this._session = session;
        this._changed.emit();
      }
    } catch {
      // the next event syncs again
    }
  }

  private async _call(fn: () => Promise<ISession>): Promise<ISession | null> {
    this._pending += 1;
    this._error = null;
    this._changed.emit();
    try {
      const session = await fn();
      this._session = session;
      return session;
    } catch (reason) {
      this._error = describe(reason);
      return null;
    } finally {
      this._pending -= 1;
      this._changed.emit();
    }
  }

  private _session: ISession | null = null;
  private _error: string | null = null;
  private _pending = 0;
  private _socket: IEventSocket | null = null;
  private _timer: number | undefined;
  private _changed = new Signal<this, void>(this);
}

function describe(reason: unknown): string {
  if (reason instanceof APIError) {
    return reason.message;
  }
  return reason instanceof Error ? reason.message : String(reason);
}
