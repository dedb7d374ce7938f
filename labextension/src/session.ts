import { ISignal, Signal } from '@lumino/signaling';

import { APIError, IStatus } from './api';
import {
  IBudgets,
  IDecision,
  IImpact,
  IImpactSummary,
  IPlanEdit,
  ITranscriptEntry,
  ISession,
  ISessionSource,
  IStartOptions,
  IStep,
  IValidityCheck,
  openEvents,
  serverSessions
} from './sessionApi';
import { EventType, isPending, TimelineGroup } from './vocabulary';

/** A notebook request from the server (run_cell, insert_markdown, delete_cells). */
export interface IHostRequest {
  type: string;
  request_id: string;
  [key: string]: unknown;
}

/** Answers the server's notebook requests (the notebook bridge, or a fake in tests). */
export interface IHostHandler {
  handle(request: IHostRequest, path: string): Promise<{ [key: string]: unknown }>;
  /** Whether the notebook at `path` holds a cell of the step. */
  hasStep?(path: string, stepId: string): boolean;
  /** Scroll to and select the step's cell; false when the notebook has none. */
  selectStep?(path: string, stepId: string): Promise<boolean>;
}

/** The socket the model talks through (a WebSocket, or a fake in tests). */
export interface IEventSocket {
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: unknown) => void) | null;
  send(data: string): void;
  close(): void;
}

const HOST_REQUESTS = ['run_cell', 'insert_markdown', 'delete_cells'];
/** Statuses of an older server that has no such endpoint (listing, interrupt). */
const MISSING = [404, 405];
/** Coalesce bursts of events into one fetch of the whole session. */
const SYNC_DELAY_MS = 150;
/** How often a panel without a session looks for one started elsewhere (e.g. from the chat). */
export const LOOK_MS = 3000;

/**
 * The co-pilot session of the panel: the server's session dict, kept current from the event
 * socket, and the actions the expert takes on it (decide, undo).
 */
export class SessionModel {
  constructor(
    readonly source: ISessionSource = serverSessions,
    readonly host: IHostHandler | null = null,
    readonly connect: (id: string) => IEventSocket = id => openEvents(id) as unknown as IEventSocket
  ) {}

  get changed(): ISignal<this, void> {
    return this._changed;
  }
  /** Emitted with the options of every start the expert asks for (JupyterLab saves them). */
  get started(): ISignal<this, IStartOptions> {
    return this._started;
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
      this._pending > 0 || (!!s && (s.state === 'running' || s.plan.some(step => step.status === 'running')))
    );
  }
  /** Decisions still waiting for the expert, in the order of their steps in the plan. */
  get openDecisions(): IDecision[] {
    const s = this._session;
    if (!s) {
      return [];
    }
    // a decision whose step was undone or replaced asks nothing any more
    const order = new Map(s.plan.filter(st => isPending(st.status)).map((st, i) => [st.id, i]));
    return s.decisions
      .filter(d => d.choice === null && order.has(d.step_id))
      .sort((a, b) => (order.get(a.step_id) as number) - (order.get(b.step_id) as number));
  }

  /**
   * The one question the panel asks now: the open decision of the step the co-pilot waits at,
   * else, while nothing runs, that of the next step to run. Null while a step before every open
   * decision has still to run: after an undo, a reopened question waits for the steps it
   * depends on (the split, say), and is asked when the co-pilot reaches its step.
   */
  get nextDecision(): IDecision | null {
    const s = this._session;
    if (!s) {
      return null;
    }
    const open = new Map(this.openDecisions.map(d => [d.step_id, d]));
    const pending = s.plan.filter(st => isPending(st.status));
    const waiting = pending.find(st => st.status === 'awaiting_decision' && open.has(st.id));
    if (waiting) {
      return open.get(waiting.id) as IDecision;
    }
    const busy = s.state === 'running' || s.plan.some(st => st.status === 'running');
    return busy || pending.length === 0 ? null : (open.get(pending[0].id) ?? null);
  }
  /** False once the event socket closed (the panel can reconnect). */
  get connected(): boolean {
    return this._socket !== null;
  }
  /** The notebook the panel follows (server path, no leading slash). */
  get path(): string | null {
    return this._path;
  }
  /** What the server can do: planners, default model (null until known or on an old server). */
  get status(): IStatus | null {
    return this._status;
  }
  /** The settings a new session starts from (the user's saved settings, once loaded). */
  get defaults(): Partial<IStartOptions> {
    return this._defaults;
  }
  /** The options of the last start, so a new session begins with the same settings. */
  get lastOptions(): IStartOptions | null {
    return this._lastOptions;
  }
  /** A start the server refused because the notebook has a live session (ask to replace it). */
  get conflict(): IStartOptions | null {
    return this._conflict;
  }
  /** True while the expert is setting up a session to replace the live one. */
  get restarting(): boolean {
    return this._restarting;
  }
  /** True while an interrupt request is in flight. */
  get interrupting(): boolean {
    return this._interrupting;
  }
  /** The step running now, if any. */
  get runningStep(): IStep | null {
    return this._session?.plan.find(st => st.status === 'running') ?? null;
  }

  /** Seconds since `step` started running (the server's start time, else when first seen). */
  elapsed(step: IStep, now: number = Date.now()): number {
    const started = step.started ? Date.parse(step.started) : NaN;
    const since = Number.isNaN(started) ? (this._seenRunning.get(step.id) ?? now) : started;
    return Math.max(0, Math.round((now - since) / 1000));
  }

  /** Seconds the co-pilot has spent in its current phase (a step, or observing and planning). */
  elapsedRunning(now: number = Date.now()): number {
    return this._phaseSince === null ? 0 : Math.max(0, Math.round((now - this._phaseSince) / 1000));
  }

  /** Whether the step has a cell in the notebook to show. */
  hasCell(step: IStep): boolean {
    const s = this._session;
    if (!s || !this.host?.hasStep) {
      return false;
    }
    return this.host.hasStep(s.path, step.id);
  }

  /** Scroll the notebook to the step's cell and select it. */
  async selectStep(step: IStep): Promise<boolean> {
    const s = this._session;
    if (!s || !this.host?.selectStep) {
      return false;
    }
    return this.host.selectStep(s.path, step.id);
  }

  /** Ask the server once which planners it offers and its default model. */
  async loadStatus(): Promise<void> {
    try {
      this._status = await this.source.status();
      this._changed.emit();
    } catch {
      // an unreachable status leaves every setting selectable; the start reports real errors
    }
  }

  /**
   * Follow another notebook (or none): drop the current session and reconnect to the live
   * session of that notebook, if the server has one (one session per notebook).
   */
  async follow(path: string | null): Promise<void> {
    const next = path === null ? null : path.replace(/^\//, '');
    if (next === this._path) {
      return;
    }
    this._path = next;
    const ticket = ++this._ticket;
    if (next !== null && this._session?.path.replace(/^\//, '') === next) {
      this._changed.emit(); // the server moved the session with its renamed notebook: keep it
      return;
    }
    this.dispose();
    this._session = null;
    this._error = null;
    this._conflict = null;
    this._restarting = false;
    this._changed.emit();
    if (next !== null) {
      await this._rejoin(next, ticket);
    }
  }

  /** Reconnect to the notebook's live session (e.g. after the server refused a second one). */
  async rejoin(): Promise<void> {
    if (this._path !== null) {
      this._conflict = null;
      this._restarting = false;
      await this._rejoin(this._path, ++this._ticket);
    }
  }

  /** Take the settings new sessions start from (loaded, or edited in the Settings Editor). */
  setDefaults(defaults: Partial<IStartOptions>): void {
    this._defaults = { ...defaults };
    this._changed.emit();
  }

  /** The time budgets every new session asks for (the settings' "budgets"). */
  setBudgets(budgets: IBudgets): void {
    this._budgets = { ...budgets };
  }

  /** The budget, in seconds, of what runs now (the latest progress the server sent). */
  get budget(): number | null {
    return this._budget;
  }

  /** Show the start form to replace the live session (or hide it again). */
  setRestarting(value: boolean): void {
    this._restarting = value;
    this._conflict = null;
    this._changed.emit();
  }

  /** Interrupt the running step; the session stays usable. */
  async interrupt(): Promise<void> {
    const id = this._session?.id;
    if (!id || this._interrupting) {
      return;
    }
    this._interrupting = true;
    this._error = null;
    this._changed.emit();
    try {
      const session = await this.source.interrupt(id);
      if (session && this._session?.id === id) {
        this._setSession(session);
      } else {
        this._scheduleSync();
      }
    } catch (reason) {
      this._error =
        reason instanceof APIError && MISSING.includes(reason.status)
          ? 'This server cannot interrupt a step (update jupyter-dcpilot); use Kernel > Interrupt.'
          : describe(reason);
    } finally {
      this._interrupting = false;
      this._changed.emit();
    }
  }

  /** Listen to the current session's events again (after the socket closed). */
  reconnect(): void {
    if (this._session) {
      this._error = null;
      this._listen(this._session.id);
      this._changed.emit();
    }
  }

  /**
   * Start the notebook's session and listen to its events. A server that already hosts a live
   * session for the notebook refuses (409) unless `replace` is set: the model then keeps the
   * options in `conflict` so the panel can ask whether to replace it.
   */
  async start(options: IStartOptions): Promise<void> {
    if (options.budget === undefined && Object.keys(this._budgets).length > 0) {
      options = { ...options, budget: this._budgets };
    }
    this._lastOptions = options;
    this._started.emit(options);
    this._conflict = null;
    const session = await this._call(
      () => this.source.start(options),
      reason => {
        if (reason instanceof APIError && reason.status === 409 && !options.replace) {
          this._conflict = options;
          return true;
        }
        return false;
      }
    );
    if (session) {
      this._restarting = false;
      this._path = session.path;
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

  /** Edit the plan (skip, move, add, params, reopen); the server answers with the session. */
  async edit(edit: IPlanEdit): Promise<boolean> {
    const id = this._session?.id;
    const source = this.source;
    if (!id || !source.edit) {
      return false;
    }
    return (await this._call(() => source.edit!(id, edit))) !== null;
  }

  /** Start (again) or cancel the impact estimate of a decision's options. */
  async estimate(decisionId: string, action: 'start' | 'cancel'): Promise<void> {
    const id = this._session?.id;
    const source = this.source;
    if (id && source.impact) {
      await this._call(() => source.impact!(id, decisionId, action));
    }
  }

  /** Move a column to another group of the timeline (its own group confirms it). */
  async moveColumn(column: string, group: TimelineGroup, rationale = ''): Promise<void> {
    const id = this._session?.id;
    const source = this.source;
    if (id && source.moveColumn) {
      await this._call(
        () => source.moveColumn!(id, column, group, rationale),
        this._unsupported(`move '${column}' on the timeline`)
      );
    }
  }

  /** Answer a structural question: the inferred value, or one of its alternatives. */
  async answerInference(inferenceId: string, value: unknown, rationale = ''): Promise<void> {
    const id = this._session?.id;
    const source = this.source;
    if (id && source.answerInference) {
      await this._call(
        () => source.answerInference!(id, inferenceId, value, rationale),
        this._unsupported('record answers to structural questions')
      );
    }
  }

  /** A server without the endpoint (an older co-pilot, 404 page): said in words, nothing changed. */
  private _unsupported(what: string): (reason: unknown) => boolean {
    return reason => {
      if (reason instanceof APIError && !reason.routed) {
        this._error =
          `This server's co-pilot cannot ${what} yet (it has no such endpoint: 404 Not Found). ` +
          'Nothing was changed; update jupyter-dcpilot on the server to answer it here.';
        return true;
      }
      return false;
    };
  }

  /** Restore the state before a checkpoint's step. */
  async undo(checkpoint: string): Promise<void> {
    const id = this._session?.id;
    if (id) {
      await this._call(() => this.source.undo(id, checkpoint));
    }
  }

  /** Apply one message of the event socket to the session. */
  apply(message: { type?: EventType | 'session'; [key: string]: unknown }): void {
    if (message.type === 'session') {
      this._setSession(message.session as ISession);
      this._changed.emit();
      return;
    }
    const s = this._session;
    if (!s) {
      return;
    }
    switch (message.type) {
      case 'progress': {
        // every few seconds while work runs: nothing to fetch again, and nothing to draw unless
        // the budget shown changes (the line counts its seconds itself)
        const budget = typeof message.budget_s === 'number' ? message.budget_s : null;
        if (budget !== this._budget) {
          this._budget = budget;
          this._changed.emit();
        }
        return;
      }
      case 'state':
        s.state = String(message.state);
        break;
      case 'step': {
        const step = s.plan.find(st => st.id === message.step);
        if (step) {
          step.status = String(message.status);
          if (typeof message.started === 'string') {
            step.started = message.started;
          }
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
        s.transcript.push(message.entry as ITranscriptEntry);
        break;
      case 'impact': {
        // an option's estimate arrived: the card fills in at once, without fetching the session
        const decision = s.decisions.find(d => d.id === message.decision_id);
        if (decision) {
          decision.impact = message.impact as IImpactSummary;
          for (const update of (message.options ?? []) as { id: string; impact: IImpact | null }[]) {
            const option = decision.options.find(o => o.id === update.id);
            if (option) {
              option.impact = update.impact;
            }
          }
        }
        this._changed.emit();
        return;
      }
      case 'validity': // the verdict's checks, after a model was trained
        s.validity = message.checks as IValidityCheck[];
        break;
      case 'renamed': // the notebook was renamed or moved: the session followed it
        s.path = String(message.path);
        break;
      case 'closed': // replaced, its notebook deleted, or the server is shutting down
        this.dispose();
        this._session = null;
        this._error = `The co-pilot session closed: ${String(message.reason ?? 'by the server')}.`;
        this._changed.emit();
        if (this._path !== null && this._pending === 0) {
          void this._rejoin(this._path, this._ticket); // e.g. the one the chat started instead
        }
        return;
    }
    this._noteRunning();
    this._changed.emit();
    this._scheduleSync();
  }

  /** Stop listening (the panel follows another notebook, or closes). */
  dispose(): void {
    window.clearTimeout(this._timer);
    window.clearTimeout(this._lookTimer);
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
      let message: { type?: string; request_id?: unknown; [key: string]: unknown };
      try {
        message = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (!message || typeof message !== 'object') {
        return;
      }
      if (HOST_REQUESTS.includes(String(message.type)) && message.request_id) {
        void this._answer(socket, message as IHostRequest);
      } else {
        // what is not a host request is one of the session's events (vocabulary.ts)
        this.apply(message as { type?: EventType; [key: string]: unknown });
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
        this._setSession(session);
        this._changed.emit();
      }
    } catch {
      // the next event syncs again
    }
  }

  private async _rejoin(path: string, ticket: number): Promise<void> {
    try {
      const sessions = (await this.source.list(path)).filter(
        summary => summary.path.replace(/^\//, '') === path
      );
      if (ticket !== this._ticket) {
        return;
      }
      if (sessions.length === 0) {
        // a session may still start elsewhere (the chat): look again while none is shown
        window.clearTimeout(this._lookTimer);
        this._lookTimer = window.setTimeout(() => {
          if (ticket === this._ticket && !this._session && !this._socket) {
            void this._rejoin(path, ticket);
          }
        }, LOOK_MS);
        return;
      }
      const latest = sessions.reduce((a, b) => (b.created > a.created ? b : a));
      const session = await this.source.get(latest.id);
      if (ticket !== this._ticket) {
        return;
      }
      this._error = null;
      this._setSession(session);
      this._listen(session.id);
    } catch (reason) {
      if (ticket !== this._ticket || (reason instanceof APIError && MISSING.includes(reason.status))) {
        return; // an older server lists no sessions: the panel offers to start one
      }
      this._error = describe(reason);
    }
    this._changed.emit();
  }

  /** Take the server's session and note when its steps were first seen running. */
  private _setSession(session: ISession): void {
    this._session = session;
    this._noteRunning();
  }

  private _noteRunning(): void {
    const s = this._session;
    const now = Date.now();
    const running = new Set((s?.plan ?? []).filter(st => st.status === 'running').map(st => st.id));
    for (const id of running) {
      if (!this._seenRunning.has(id)) {
        this._seenRunning.set(id, now);
      }
    }
    for (const id of Array.from(this._seenRunning.keys())) {
      if (!running.has(id)) {
        this._seenRunning.delete(id);
      }
    }
    // the phase: which step runs, or observing/planning between steps
    const phase = s?.state === 'running' ? (Array.from(running)[0] ?? '') : null;
    if (phase !== this._phase) {
      this._phase = phase;
      this._phaseSince = phase === null ? null : now;
    }
  }

  private async _call(
    fn: () => Promise<ISession>,
    handled: (reason: unknown) => boolean = () => false
  ): Promise<ISession | null> {
    this._pending += 1;
    this._error = null;
    this._changed.emit();
    try {
      const session = await fn();
      this._error = null; // e.g. the replaced session's "closed" that arrived meanwhile
      this._setSession(session);
      return session;
    } catch (reason) {
      if (!handled(reason)) {
        this._error = describe(reason);
      }
      return null;
    } finally {
      this._pending -= 1;
      this._changed.emit();
    }
  }

  private _session: ISession | null = null;
  private _path: string | null = null;
  private _ticket = 0;
  private _status: IStatus | null = null;
  private _lastOptions: IStartOptions | null = null;
  private _defaults: Partial<IStartOptions> = {};
  private _budgets: IBudgets = {};
  private _budget: number | null = null;
  private _conflict: IStartOptions | null = null;
  private _restarting = false;
  private _interrupting = false;
  private _seenRunning = new Map<string, number>();
  private _phase: string | null = null;
  private _phaseSince: number | null = null;
  private _error: string | null = null;
  private _pending = 0;
  private _socket: IEventSocket | null = null;
  private _timer: number | undefined;
  private _lookTimer: number | undefined;
  private _changed = new Signal<this, void>(this);
  private _started = new Signal<this, IStartOptions>(this);
}

function describe(reason: unknown): string {
  if (reason instanceof APIError) {
    return reason.message;
  }
  return reason instanceof Error ? reason.message : String(reason);
}
