import * as React from 'react';

import { DecisionCard } from './decisionCard';
import { EpisodeLibrary, StepActions } from './planEditor';
import { formatCount } from './format';
import { SessionModel } from './session';
import { StructureQuestion, TimelineCard } from './structureCards';
import { ISession, IStep, IValidityCheck, usageTotal } from './sessionApi';

/** How often the progress line counts the seconds. */
const TICK_MS = 1000;

/** Seconds as people read them: 75 → "1 min 15 s". */
export function formatSeconds(seconds: number): string {
  if (seconds < 60) {
    return `${seconds} s`;
  }
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${seconds % 60} s`;
}

/** Re-render every second while `active` (for elapsed times). */
function useTick(active: boolean): number {
  const [now, setNow] = React.useState(() => Date.now());
  React.useEffect(() => {
    if (!active) {
      return;
    }
    const tick = () => setNow(Date.now());
    const first = window.setTimeout(tick, 0); // at once, not a second late
    const timer = window.setInterval(tick, TICK_MS);
    return () => {
      window.clearTimeout(first);
      window.clearInterval(timer);
    };
  }, [active]);
  return now;
}

/** What runs now and for how long, with the button that interrupts it. */
export function Progress(props: { model: SessionModel }): JSX.Element | null {
  const { model } = props;
  const session = model.session;
  const step = model.runningStep;
  const active = !!session && (session.state === 'running' || step !== null);
  const now = useTick(active);
  if (!session || !active) {
    return null;
  }
  const seconds = step ? model.elapsed(step, now) : model.elapsedRunning(now);
  const budget = (step ? step.budget_s : null) ?? model.budget;
  return (
    <div className="jp-dcpilot-progress" role="status" data-step={step?.id ?? ''}>
      <span className="jp-dcpilot-spinner" aria-hidden="true" />
      <span className="jp-dcpilot-progress-text">
        {step ? (
          <>
            Running <b>{step.title}</b>
          </>
        ) : (
          'Diagnosing and planning'
        )}{' '}
        · <span className="jp-dcpilot-elapsed">{formatSeconds(seconds)}</span>
        {budget ? (
          <span className="jp-dcpilot-budget" data-over={seconds > budget ? 'true' : 'false'}>
            {' '}
            of {seconds > budget ? 'a' : 'its'} {formatSeconds(Math.round(budget))} budget
            {seconds > budget ? ': over budget' : ''}
          </span>
        ) : null}
      </span>
      {step && (
        // the server interrupts co-pilot steps; diagnosis and planning run to their end
        <button
          type="button"
          className="jp-dcpilot-interrupt jp-mod-styled jp-mod-warn"
          disabled={model.interrupting}
          title="Interrupt the kernel's co-pilot step; the session stays usable"
          onClick={() => void model.interrupt()}
        >
          {model.interrupting ? 'Interrupting…' : 'Interrupt'}
        </button>
      )}
    </div>
  );
}

/** One plan step: status badge and title; a step with a cell selects it in the notebook. */
function StepItem(props: { model: SessionModel; step: IStep }): JSX.Element {
  const { model, step } = props;
  // a running step's cell is in the notebook already (inserted, then run)
  const linked = step.status === 'running' || model.hasCell(step);
  // what the expert did to it, except what its status badge says already (skipped)
  const edits = (step.by_user ?? []).filter(edit => edit !== step.status);
  return (
    <li className="jp-dcpilot-step" data-step={step.id} data-episode={step.episode} data-status={step.status}>
      <span className={`jp-dcpilot-badge jp-dcpilot-status-${step.status}`}>
        {step.status.replace('_', ' ')}
      </span>
      {linked ? (
        <button
          type="button"
          className="jp-dcpilot-step-title jp-dcpilot-link"
          title={`${step.reason ? `${step.reason}\n` : ''}Show its cell in the notebook`}
          onClick={() => void model.selectStep(step)}
        >
          {step.title}
        </button>
      ) : (
        <span className="jp-dcpilot-step-title" title={step.reason}>
          {step.title}
        </span>
      )}
      {edits.length > 0 && (
        <span className="jp-dcpilot-chip jp-dcpilot-by-user" title="edited by you">
          {edits.join(', ')}
        </span>
      )}
      <StepActions model={model} step={step} />
      {step.error && <div className="jp-dcpilot-step-error">{step.error}</div>}
      {step.note && <div className="jp-dcpilot-step-note">{step.note}</div>}
    </li>
  );
}

/** Check names as a reader says them. */
const CHECK_TITLES: { [check: string]: string } = {
  model_trained: 'A model was trained',
  diagnosis_complete: 'Every check of the data ran',
  no_identifiers: 'No identifier among the features',
  no_follow_up: 'Nothing recorded after the prediction time',
  no_leakage: 'No column gives the outcome away',
  entities_together: 'Entities kept together',
  known_at_index: 'Rows known at the prediction time',
  documented: 'What each column is could be read',
  task_metric: "The task's metric",
  cv_stable: 'No single fold decides the estimate',
  holdout_confirms_cv: 'The holdout confirms the model',
  test_untouched: 'Test rows untouched by any fit',
  structure_confirmed: 'Every structural choice clear or confirmed',
  no_suspect_score: 'No too-good-to-be-true score',
  approved_steps_ran: 'Every approved step ran'
};

/** The verdict as its checks: each with what it found, failed ones first. */
export function ValidityCard(props: { checks: IValidityCheck[] }): JSX.Element {
  const { checks } = props;
  const failed = checks.filter(c => !c.passed);
  const valid = checks.length > 0 && failed.length === 0;
  const ordered = [...failed, ...checks.filter(c => c.passed)];
  return (
    <section
      className={`jp-dcpilot-validity ${valid ? 'jp-mod-valid' : 'jp-mod-invalid'}`}
      aria-label="Is the model valid?"
    >
      <div className="jp-dcpilot-validity-verdict">
        {valid
          ? `Valid model: all ${checks.length} checks passed`
          : `Not a valid model: ${failed.length} of ${checks.length} checks failed`}
      </div>
      <ul className="jp-dcpilot-validity-checks">
        {ordered.map(c => (
          <li key={c.check} data-check={c.check} data-passed={c.passed ? 'yes' : 'no'}>
            <span className="jp-dcpilot-validity-mark" aria-label={c.passed ? 'passed' : 'failed'}>
              {c.passed ? '✓' : '✗'}
            </span>
            <span className="jp-dcpilot-validity-name">{CHECK_TITLES[c.check] ?? c.check}</span>
            <div className="jp-dcpilot-validity-detail">{c.detail}</div>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The whole transcript and what the LLM cost, folded away by default. */
export function TranscriptSection(props: { session: ISession }): JSX.Element {
  const { session } = props;
  const usage = usageTotal(session);
  const tokens = usage.input_tokens + usage.output_tokens;
  const llm =
    usage.calls > 0
      ? `LLM: ${usage.calls} call${usage.calls === 1 ? '' : 's'}, ${formatCount(tokens)} tokens`
      : 'no LLM calls';
  return (
    <details className="jp-dcpilot-log">
      <summary>
        Transcript ({session.transcript.length}) · <span className="jp-dcpilot-usage-summary">{llm}</span>
      </summary>
      {usage.calls > 0 && (
        <table className="jp-dcpilot-table jp-dcpilot-usage">
          <tbody>
            <tr>
              <th>calls</th>
              <td>{formatCount(usage.calls)}</td>
            </tr>
            <tr>
              <th>input tokens</th>
              <td>{formatCount(usage.input_tokens)}</td>
            </tr>
            <tr>
              <th>output tokens</th>
              <td>{formatCount(usage.output_tokens)}</td>
            </tr>
            <tr>
              <th>cost</th>
              <td>${usage.cost_usd.toFixed(4)}</td>
            </tr>
          </tbody>
        </table>
      )}
      <ol className="jp-dcpilot-transcript">
        {session.transcript.map((entry, i) => (
          <li key={`${entry.at}-${i}`} className={`jp-dcpilot-log-${entry.kind}`}>
            <span className="jp-dcpilot-log-time">{entry.at.slice(11, 19)}</span>
            <span className="jp-dcpilot-log-kind">{entry.kind}</span> {entry.text}
          </li>
        ))}
      </ol>
    </details>
  );
}

/** The session: progress, open decisions, the plan, checkpoints, transcript and LLM usage. */
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
  const titles = new Map(session.plan.map(st => [st.id, st.title]));
  const last = session.transcript[session.transcript.length - 1];
  // one card at a time, in plan order; the others are named (their steps show in the plan)
  const next = model.nextDecision;
  const later = model.openDecisions.filter(d => d !== next);
  // a structural choice made on weak evidence is asked (the timings: on the timeline card)
  const asked = (session.inferences ?? []).find(i => i.confidence === 'low' && i.what !== 'timing');
  return (
    <div className="jp-dcpilot-session" data-state={session.state}>
      <div className="jp-dcpilot-toolbar">
        <span className="jp-dcpilot-section-title">Co-pilot: {session.frame}</span>
        <span className={`jp-dcpilot-state jp-dcpilot-state-${session.state}`}>
          {busy && !model.runningStep && session.state !== 'running' && (
            <span className="jp-dcpilot-spinner" aria-label="running" />
          )}
          {session.state}
        </span>
      </div>
      {model.error && <div className="jp-dcpilot-error">{model.error}</div>}
      {session.trusted === false && (
        <div className="jp-dcpilot-untrusted" role="alert">
          <b>Not trusted:</b> {session.trust_note || 'this session file was not written by your co-pilot.'}
        </div>
      )}
      {!model.connected && (
        <button type="button" className="jp-dcpilot-reconnect" onClick={() => model.reconnect()}>
          Reconnect
        </button>
      )}
      <Progress model={model} />
      {next && (
        <DecisionCard
          key={next.id}
          decision={next}
          title={titles.get(next.step_id)}
          disabled={model.running && session.state !== 'blocked'}
          onDecide={(choice, rationale) => void model.decide(next.id, choice, rationale)}
          onEstimate={action => void model.estimate(next.id, action)}
          params={session.plan.find(st => st.id === next.step_id)?.user_params}
          onRestart={() => model.setRestarting(true)}
        />
      )}
      {!next && asked && (
        <StructureQuestion
          key={asked.id}
          inference={asked}
          disabled={model.running && session.state !== 'blocked'}
          onAnswer={
            model.source.answerInference ? value => void model.answerInference(asked.id, value) : undefined
          }
        />
      )}
      {later.length > 0 && (
        <div className="jp-dcpilot-later" data-count={later.length}>
          {later.length === 1 ? '1 more question' : `${later.length} more questions`} later in the plan:{' '}
          {later.map(d => titles.get(d.step_id) ?? d.step_id).join('; ')}
        </div>
      )}
      {session.timeline && Object.keys(session.timeline.columns).length > 0 && (
        <TimelineCard
          timeline={session.timeline}
          disabled={model.running && session.state !== 'blocked'}
          onMove={
            model.source.moveColumn ? (column, group) => void model.moveColumn(column, group) : undefined
          }
        />
      )}
      {session.plan.length > 0 && (
        <>
          <div className="jp-dcpilot-subtitle">Plan</div>
          <ol className="jp-dcpilot-plan">
            {session.plan.map(step => (
              <StepItem key={step.id} model={model} step={step} />
            ))}
          </ol>
          <EpisodeLibrary model={model} />
        </>
      )}
      {session.validity && session.validity.length > 0 && <ValidityCard checks={session.validity} />}
      {session.checkpoints.length > 0 && (
        <>
          <div className="jp-dcpilot-subtitle">Checkpoints</div>
          <ol className="jp-dcpilot-checkpoints">
            {session.checkpoints.map(cp => (
              <li
                key={cp.id}
                className="jp-dcpilot-checkpoint"
                data-checkpoint={cp.id}
                data-step={cp.step_id}
              >
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
        </>
      )}
      {last && <div className="jp-dcpilot-last">{last.text}</div>}
      <TranscriptSection session={session} />
      <div className="jp-dcpilot-actions">
        <button
          type="button"
          className="jp-dcpilot-new jp-dcpilot-button"
          title="Start a new co-pilot session on this notebook (replaces this one)"
          onClick={() => model.setRestarting(true)}
        >
          New session…
        </button>
      </div>
    </div>
  );
}
