import * as React from 'react';

import { IFrameProfile } from './api';
import { SessionModel } from './session';
import { IDecision, IStartOptions } from './sessionApi';

const TASKS = ['auto', 'classification', 'regression', 'survival'];
/** How many transcript lines the panel shows. */
const TAIL = 6;

/** Target, task and approval policy for a new co-pilot session on one frame. */
export function StartForm(props: {
  frame: string;
  path: string;
  profile: IFrameProfile;
  disabled: boolean;
  onStart: (options: IStartOptions) => void;
}): JSX.Element {
  const { frame, path, profile, disabled, onStart } = props;
  const columns = profile.columns_detail.map(c => c.name);
  const [target, setTarget] = React.useState(columns[columns.length - 1] ?? '');
  const [task, setTask] = React.useState('auto');
  const [approve, setApprove] = React.useState('ask');
  return (
    <form
      className="jp-dcpilot-start"
      onSubmit={event => {
        event.preventDefault();
        onStart({ path, frame, target, task, approve });
      }}
    >
      <div className="jp-dcpilot-section-title">Co-pilot for {frame}</div>
      <label>
        target
        <select name="target" value={target} onChange={e => setTarget(e.target.value)}>
          {columns.map(c => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      </label>
      <label>
        task
        <select name="task" value={task} onChange={e => setTask(e.target.value)}>
          {TASKS.map(t => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </label>
      <label>
        approve
        <select name="approve" value={approve} onChange={e => setApprove(e.target.value)}>
          <option value="ask">ask me</option>
          <option value="recommended">recommended</option>
        </select>
      </label>
      <button type="submit" className="jp-mod-styled jp-mod-accept" disabled={disabled || !target}>
        Start co-pilot
      </button>
    </form>
  );
}

/** Longest evidence value shown in full (row lists can be long). */
const MAX_EVIDENCE_CHARS = 80;

function show(value: unknown): string {
  if (typeof value === 'number') {
    return Number.isInteger(value) ? String(value) : value.toPrecision(3);
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > MAX_EVIDENCE_CHARS ? `${text.slice(0, MAX_EVIDENCE_CHARS - 1)}…` : text;
}

/** One open decision: the question, its evidence and the options, the recommended one marked. */
export function DecisionCard(props: {
  decision: IDecision;
  disabled?: boolean;
  onDecide: (choice: string, rationale: string) => void;
}): JSX.Element {
  const { decision, disabled, onDecide } = props;
  const [rationale, setRationale] = React.useState('');
  const recommended =
    decision.recommended ?? decision.options.find(o => o.recommended)?.id ?? null;
  return (
    <div className="jp-dcpilot-decision" data-decision={decision.id} data-gate={decision.gate} data-step={decision.step_id}>
      <div className="jp-dcpilot-question">{decision.question}</div>
      {Object.keys(decision.evidence).length > 0 && (
        <ul className="jp-dcpilot-evidence">
          {Object.entries(decision.evidence).map(([key, value]) => (
            <li key={key}>
              <span className="jp-dcpilot-evidence-key">{key}</span> = {show(value)}
            </li>
          ))}
        </ul>
      )}
      <div className="jp-dcpilot-options">
        {decision.options.map(option => (
          <button
            key={option.id}
            type="button"
            data-option={option.id}
            className={`jp-dcpilot-option${option.id === recommended ? ' jp-mod-recommended' : ''}`}
            title={[option.description, option.risk].filter(Boolean).join(' — ')}
            disabled={disabled}
            onClick={() => onDecide(option.id, rationale)}
          >
            {option.label ?? option.id}
            {option.id === recommended && ' (recommended)'}
          </button>
        ))}
      </div>
      <input
        className="jp-dcpilot-rationale"
        placeholder="Why (optional)"
        value={rationale}
        onChange={e => setRationale(e.target.value)}
      />
      {recommended && (
        <button
          type="button"
          className="jp-dcpilot-approve jp-mod-styled jp-mod-accept"
          disabled={disabled}
          onClick={() => onDecide(recommended, rationale)}
        >
          Approve recommended
        </button>
      )}
    </div>
  );
}

/** The session: running indicator, plan, open decisions, checkpoints and the transcript tail. */
export function SessionView(props: {
  model: SessionModel;
  onKernelChanged?: () => void;
}): JSX.Element | null {
  const { model, onKernelChanged } = props;
  const session = model.session;
  if (!session) {
    return model.error ? <div className="jp-dcpilot-error">{model.error}</div> : null;
  }
  const busy = model.running;
  return (
    <div className="jp-dcpilot-session" data-state={session.state}>
      <div className="jp-dcpilot-toolbar">
        <span className="jp-dcpilot-section-title">Co-pilot: {session.frame}</span>
        <span className={`jp-dcpilot-state jp-dcpilot-state-${session.state}`}>
          {busy && <span className="jp-dcpilot-spinner" aria-label="running" />}
          {session.state}
        </span>
      </div>
      {model.error && <div className="jp-dcpilot-error">{model.error}</div>}
      {!model.connected && (
        <button type="button" className="jp-dcpilot-reconnect" onClick={() => model.reconnect()}>
          Reconnect
        </button>
      )}
      {model.openDecisions.map(decision => (
        <DecisionCard
          key={decision.id}
          decision={decision}
          disabled={model.running && session.state !== 'blocked'}
          onDecide={(choice, rationale) => void model.decide(decision.id, choice, rationale)}
        />
      ))}
      <ol className="jp-dcpilot-plan">
        {session.plan.map(step => (
          <li key={step.id} className="jp-dcpilot-step" data-step={step.id} data-status={step.status}>
            <span className={`jp-dcpilot-badge jp-dcpilot-status-${step.status}`}>{step.status}</span>
            <span className="jp-dcpilot-step-title" title={step.reason}>
              {step.title}
            </span>
            {step.error && <div className="jp-dcpilot-step-error">{step.error}</div>}
          </li>
        ))}
      </ol>
      {session.checkpoints.length > 0 && (
        <ol className="jp-dcpilot-checkpoints">
          {session.checkpoints.map(cp => (
            <li key={cp.id} className="jp-dcpilot-checkpoint" data-checkpoint={cp.id} data-step={cp.step_id}>
              <span>before {cp.label}</span>
              <button
                type="button"
                className="jp-dcpilot-undo"
                disabled={busy}
                onClick={() => void model.undo(cp.id).then(onKernelChanged)}
              >
                Undo to here
              </button>
            </li>
          ))}
        </ol>
      )}
      <ul className="jp-dcpilot-transcript">
        {session.transcript.slice(-TAIL).map((entry, i) => (
          <li key={`${entry.at}-${i}`} className={`jp-dcpilot-log-${entry.kind}`}>
            {entry.text}
          </li>
        ))}
      </ul>
    </div>
  );
}
