import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { IStatus, requestAPI } from './api';
import { IDecision, IDecisionOption, IFinding } from './findingTypes';
import { Confidence, EvidenceSource, InferenceKind, TimelineGroup } from './vocabulary';

// findings, options and decisions: generated from the Python types (see findingTypes.ts)
export type {
  IChart,
  IChartBar,
  IDecision,
  IDecisionOption,
  IFinding,
  IImpact,
  IImpactSummary,
  IOption,
  IPastAnswer
} from './findingTypes';

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
  /** When the step started running (ISO time), if the server says. */
  started?: string | null;
  /** Its time budget in seconds when it last ran. */
  budget_s?: number | null;
  /** How long its last run took, in seconds. */
  elapsed_s?: number | null;
  /** Parameters the expert set on the step (they override the call's). */
  user_params?: { [key: string]: unknown };
  /** What the expert did to it: added, moved, params, skipped. */
  by_user?: string[];
  /** The kernel_tools function it calls, and the call's parameters as planned. */
  function?: string | null;
  params?: { [key: string]: unknown };
  /** The findings it answers. */
  finding_ids?: string[];
}

/** One parameter an edit may set on a step of an episode. */
export interface IParamSpec {
  kind: 'columns' | 'choice' | 'number' | 'names';
  choices?: string[];
  min?: number;
  max?: number;
  optional?: boolean;
  integer?: boolean;
  doc?: string;
  /** The call's keyword, when it differs from the parameter's name. */
  param?: string;
}

/** One episode of the library, as the "add a step" list shows it. */
export interface IEpisode {
  id: string;
  name: string;
  stage: string;
  gate: string | null;
  line: string;
  addable: boolean;
  why_not: string | null;
  /** A valid model needs it: its steps are never skipped. */
  required: boolean;
  params: { [key: string]: IParamSpec };
}

/** One plan edit, as the panel sends it (see the server's engine/plan_edits.py). */
export interface IPlanEdit {
  op: 'skip' | 'move' | 'add' | 'params' | 'reopen';
  step?: string;
  episode?: string;
  columns?: string[];
  params?: { [key: string]: unknown };
  before?: string;
  after?: string;
  reason?: string;
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

/** One LLM call, as the engine records it. */
export interface ILLMUsage {
  purpose?: string;
  step_id?: string | null;
  model?: string;
  input_tokens?: number;
  output_tokens?: number;
  cost_usd?: number;
}

/** LLM usage summed over a session. */
export interface IUsageTotal {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

/** One check of the verdict: whether the model is valid is the list of these, never a flag. */
export interface IValidityCheck {
  check: string;
  passed: boolean;
  detail: string;
}

/** One source's word on when a column is known (kernel_tools.diagnosis.timeline.Placement). */
export interface IPlacement {
  group: TimelineGroup;
  source: EvidenceSource;
  test: string;
  reason: string;
  /** A test on the data or the table's structure; false: a proposal (a name) an expert confirms. */
  strong: boolean;
  numbers: { [key: string]: unknown };
}

/** One column on the timeline: its group, how sure, and the evidence (timeline.TimelineColumn). */
export interface ITimelineColumn {
  column: string;
  group: TimelineGroup;
  confidence: Confidence;
  evidence: IPlacement[];
}

/** A person's move of a column on the timeline (structure.TimelineMove): where from, how, why. */
export interface ITimelineMove {
  column: string;
  group: TimelineGroup;
  /** The host it came through: panel, chat, magic, terminal, decisions file, or "agent <name>". */
  via: string;
  at: string;
  rationale: string;
  /** The group it was in ("" when not known). */
  before: TimelineGroup | '';
}

/** Every feature placed relative to the prediction time (ColumnTimeline.to_dict in the kernel). */
export interface IColumnTimeline {
  /** When a prediction is made, in words. */
  index: string;
  groups: { [group: string]: string[] };
  columns: { [column: string]: ITimelineColumn };
  /** The people's moves, oldest first (the server's card carries them). */
  moves?: ITimelineMove[];
}

/** Another value a structural inference could take, with its evidence (higher score: likelier). */
export interface IAlternative {
  value: unknown;
  evidence: string[];
  score: number;
}

/** One structural choice of the diagnosis with its confidence (kernel_tools.inferences.Inference). */
export interface IInference {
  id: string;
  what: InferenceKind;
  subject: string | null;
  value: unknown;
  confidence: Confidence;
  evidence: string[];
  alternatives: IAlternative[];
  details: { [key: string]: unknown };
  /** The task card's options when the question is asked as the card asks it (the blocks of one
   * entity's records), each with the value that answers it; empty: the value and alternatives. */
  options?: IStructureOption[];
}

/** A task card's option offered in the structure section, with the answer that takes it. */
export interface IStructureOption extends IDecisionOption {
  value: unknown;
}

/** A session as the server sends it (the subset the panel shows). */
export interface ISession {
  id: string;
  path: string;
  frame: string;
  state: string;
  plan: IStep[];
  decisions: IDecision[];
  /** What the diagnosis found (each finding's options carry the calls the steps make). */
  findings?: IFinding[];
  checkpoints: ICheckpoint[];
  transcript: ITranscriptEntry[];
  llm_usage?: ILLMUsage[];
  usage?: Partial<IUsageTotal> | null;
  /** the verdict's checks, once a model was trained (empty before) */
  validity?: IValidityCheck[];
  /** False when the session's history came from a sidecar this user's co-pilot did not write. */
  trusted?: boolean;
  /** Why not, in words. */
  trust_note?: string;
  /** The episodes a step can be added from, and the parameters each takes. */
  library?: IEpisode[];
  /** The expert's edits of the plan, by the user. */
  plan_edits?: { op: string; step?: string; text: string; at: string }[];
  /** Each feature on the timeline of the task (sent by a server that lets the expert move them). */
  timeline?: IColumnTimeline | null;
  /** The structural choices of the diagnosis (task, duration, entity, index, join keys, timings). */
  inferences?: IInference[];
}

/** A notebook's session as the listing shows it. */
export interface ISessionSummary {
  id: string;
  path: string;
  frame: string;
  target: string | null;
  state: string;
  created: string;
}

/** Which planner plans the steps: deterministic rules (no network) or Claude. */
export type Planner = 'rules' | 'claude';
/** What may be sent to an LLM: schema and aggregate statistics only, or also sample rows. */
export type Share = 'schema' | 'samples';

/** What starting a session asks for. */
export interface IStartOptions {
  path: string;
  frame: string;
  target: string;
  task: string;
  approve: string;
  planner?: Planner;
  /** The Claude model id; null means the server's configured default. */
  model?: string | null;
  share?: Share;
  /** Close the notebook's live session and start a new one. */
  replace?: boolean;
  /** The study's codebook, a file relative to the notebook's folder (docs/codebooks.md). */
  dictionary?: string;
  /** REDCap's instrument-event mapping, relative to the notebook's folder (with `dictionary`). */
  events?: string;
  /** Other DataFrames of the notebook's kernel to join with `frame` (files of one study). */
  join?: string[];
  /** Seconds per kind of step over the server's defaults (the settings' "budgets"). */
  budget?: IBudgets;
}

/** Seconds per kind of step: episode ids, "diagnose", and "*" for every other kind. */
export interface IBudgets {
  [kind: string]: number;
}

/** The session REST calls (the server, or a fake in tests). */
export interface ISessionSource {
  start(options: IStartOptions): Promise<ISession>;
  get(id: string): Promise<ISession>;
  decide(id: string, decisionId: string, choice: string, rationale: string): Promise<ISession>;
  undo(id: string, checkpoint: string): Promise<ISession>;
  /** The sessions of the notebook at `path` (at most one is live). */
  list(path: string): Promise<ISessionSummary[]>;
  /** Interrupt the running step; the server may answer with the session. */
  interrupt(id: string): Promise<ISession | null>;
  /** Planners available and the default model. */
  status(): Promise<IStatus>;
  /** Apply one plan edit (skip, move, add, params, reopen). */
  edit?(id: string, edit: IPlanEdit): Promise<ISession>;
  /** Start (again) or cancel the impact estimate of a decision's options. */
  impact?(id: string, decisionId: string, action: 'start' | 'cancel'): Promise<ISession>;
  /** Move a column to another group of the timeline (its own group: confirm it). */
  moveColumn?(id: string, column: string, group: TimelineGroup, rationale: string): Promise<ISession>;
  /** Answer a structural question: keep the inferred value or take an alternative. */
  answerInference?(id: string, inferenceId: string, value: unknown, rationale: string): Promise<ISession>;
}

/** Sum the LLM calls of a session (the server's own summary wins when it sends one). */
export function usageTotal(session: ISession): IUsageTotal {
  const calls = session.llm_usage ?? [];
  const summed: IUsageTotal = {
    calls: calls.length,
    input_tokens: calls.reduce((n, c) => n + (c.input_tokens ?? 0), 0),
    output_tokens: calls.reduce((n, c) => n + (c.output_tokens ?? 0), 0),
    cost_usd: calls.reduce((n, c) => n + (c.cost_usd ?? 0), 0)
  };
  return { ...summed, ...(session.usage ?? {}) };
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
  undo: (id, checkpoint) => requestAPI<ISession>(`sessions/${id}/undo`, json({ checkpoint })),
  list: async path => {
    const answer = await requestAPI<{ sessions: ISessionSummary[] }>(
      `sessions?path=${encodeURIComponent(path)}`
    );
    return answer.sessions ?? [];
  },
  interrupt: async id => {
    const answer = await requestAPI<{ plan?: unknown } | null>(`sessions/${id}/interrupt`, json({}));
    return answer && typeof answer === 'object' && Array.isArray(answer.plan) ? (answer as ISession) : null;
  },
  status: () => requestAPI<IStatus>('status'),
  edit: (id, edit) => requestAPI<ISession>(`sessions/${id}/plan`, json(edit)),
  impact: (id, decisionId, action) =>
    requestAPI<ISession>(
      `sessions/${id}/decisions/${encodeURIComponent(decisionId)}/impact`,
      json({ action })
    ),
  moveColumn: (id, column, group, rationale) =>
    requestAPI<ISession>(`sessions/${id}/timeline`, json({ column, group, rationale })),
  answerInference: (id, inferenceId, value, rationale) =>
    requestAPI<ISession>(
      `sessions/${id}/inferences/${encodeURIComponent(inferenceId)}`,
      json({ value, rationale })
    )
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
