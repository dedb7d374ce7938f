import * as React from 'react';

import { BarChart } from './chart';
import { ImpactChart } from './impactChart';
import { IDecision, IDecisionOption } from './sessionApi';

/** The recommended option's id (the decision's own field, else the option flagged so). */
export function recommendedOption(decision: IDecision): string | null {
  return decision.recommended ?? decision.options.find(o => o.recommended)?.id ?? null;
}

/**
 * The option that declines the step: the one the decision names (``rejects``; null on the task
 * card, which is confirmed or corrected, never rejected); from an older server, "skip" when
 * offered, else the option that changes nothing and is not the recommended one.
 */
export function rejectOption(decision: IDecision): IDecisionOption | null {
  if (decision.gate === 'task') {
    return null; // never "Reject (It is classification)": another kind is a correction, not a rejection
  }
  if (decision.rejects !== undefined) {
    return decision.options.find(o => o.id === decision.rejects) ?? null;
  }
  const recommended = recommendedOption(decision);
  return (
    decision.options.find(o => o.id === 'skip') ??
    decision.options.find(o => o.id !== recommended && 'action' in o && o.action === null) ??
    null
  );
}

/** What the decision log says when the person accepts an agent's proposal without a reason of their own. */
export function acceptedRationale(decision: IDecision): string {
  const proposal = decision.proposal;
  if (!proposal) {
    return '';
  }
  return (
    `accepted the proposal of agent ${proposal.agent}` + (proposal.rationale ? `: ${proposal.rationale}` : '')
  );
}

/**
 * One open decision: the question, its evidence (chart and numbers), an agent's proposal if one
 * answered it (to accept with one click), an option button each with the recommended and the
 * proposed ones marked, an optional rationale, and approve / reject.
 */
export function DecisionCard(props: {
  decision: IDecision;
  title?: string;
  disabled?: boolean;
  onDecide: (choice: string, rationale: string) => void;
  /** Start or stop the impact estimate of the options (absent: the card cannot). */
  onEstimate?: (action: 'start' | 'cancel') => void;
  /** Parameters the expert set on the step, shown with the options they change. */
  params?: { [key: string]: unknown };
  /** Set the session up again (another outcome, duration or entity than the task card's). */
  onRestart?: () => void;
}): JSX.Element {
  const { decision, title, disabled, onDecide, onEstimate, params, onRestart } = props;
  const [rationale, setRationale] = React.useState('');
  const [notThis, setNotThis] = React.useState(false);
  // the option under the pointer or the keyboard's focus: its description and risk are shown where the
  // recommended one's are (a tooltip alone hid each alternative's evidence, e.g. a window's count)
  const [pointed, setPointed] = React.useState<string | null>(null);
  const recommended = recommendedOption(decision);
  const pointedAt = decision.options.find(o => o.id === pointed && (o.description || o.risk));
  const advised = pointedAt ?? decision.options.find(o => o.id === recommended);
  const reject = rejectOption(decision);
  const proposal = decision.proposal ?? null;
  const proposed = proposal ? decision.options.find(o => o.id === proposal.choice) : undefined;
  const evidence = decision.evidence_lines ?? []; // absent from an older server: no lines
  return (
    <div
      className="jp-dcpilot-decision"
      data-decision={decision.id}
      data-gate={decision.gate}
      data-step={decision.step_id}
    >
      <div className="jp-dcpilot-decision-head">
        <span className="jp-dcpilot-chip jp-dcpilot-gate">{decision.gate}</span>
        {title && <span className="jp-dcpilot-decision-title">{title}</span>}
      </div>
      <div className="jp-dcpilot-question">{decision.question}</div>
      {proposal && (
        <div className="jp-dcpilot-proposal" data-agent={proposal.agent} data-choice={proposal.choice}>
          <span>
            <b>Agent {proposal.agent} proposes:</b> {proposed?.label ?? proposal.choice}
            {proposal.rationale && <span className="jp-dcpilot-proposal-why"> — {proposal.rationale}</span>}
          </span>
          <button
            type="button"
            className="jp-dcpilot-accept-proposal jp-mod-styled jp-mod-accept"
            title="Your answer: the agent only proposes at this gate"
            disabled={disabled}
            onClick={() => onDecide(proposal.choice, rationale || acceptedRationale(decision))}
          >
            Accept agent&apos;s proposal
          </button>
        </div>
      )}
      {decision.chart && <BarChart chart={decision.chart} />}
      {evidence.length > 0 && (
        // with a chart, the numbers behind it are one click away; the server words each line
        <details className="jp-dcpilot-evidence-box" open={!decision.chart}>
          <summary>Evidence ({evidence.length})</summary>
          <ul className="jp-dcpilot-evidence">
            {evidence.map((line, i) => (
              <li key={i}>{line}</li>
            ))}
          </ul>
        </details>
      )}
      <div className="jp-dcpilot-options" role="group" aria-label="Options">
        {decision.options.map(option => (
          <button
            key={option.id}
            type="button"
            data-option={option.id}
            className={
              'jp-dcpilot-option' +
              (option.id === recommended ? ' jp-mod-recommended' : '') +
              (option.id === proposal?.choice ? ' jp-mod-proposed' : '')
            }
            title={[option.description, option.risk && `Risk: ${option.risk}`].filter(Boolean).join(' — ')}
            disabled={disabled}
            onClick={() => onDecide(option.id, rationale)}
            onMouseEnter={() => setPointed(option.id)}
            onMouseLeave={() => setPointed(null)}
            onFocus={() => setPointed(option.id)}
            onBlur={() => setPointed(null)}
          >
            {option.label ?? option.id}
            {option.id === recommended && ' (recommended)'}
          </button>
        ))}
      </div>
      {params && Object.keys(params).length > 0 && (
        <div className="jp-dcpilot-user-params">
          <b>Your parameters:</b>{' '}
          {Object.entries(params)
            .map(([key, value]) => `${key} = ${Array.isArray(value) ? value.join(', ') : String(value)}`)
            .join('; ')}
        </div>
      )}
      <ImpactChart decision={decision} onEstimate={onEstimate} />
      {advised && (advised.description || advised.risk) && (
        <div className="jp-dcpilot-advice" data-option={advised.id}>
          <b>{advised.id === recommended ? 'Recommended:' : `${advised.label ?? advised.id}:`}</b>{' '}
          {advised.description}
          {advised.risk && <span className="jp-dcpilot-risk"> Risk: {advised.risk}</span>}
        </div>
      )}
      <input
        className="jp-dcpilot-rationale"
        placeholder="Why? (optional, logged)"
        title="Your reason goes into the decision log"
        aria-label="Rationale"
        value={rationale}
        onChange={e => setRationale(e.target.value)}
      />
      <div className="jp-dcpilot-actions">
        {reject && (
          <button
            type="button"
            className="jp-dcpilot-reject jp-mod-styled jp-mod-reject"
            data-reject={reject.id}
            title={reject.description ?? 'Do not run this step'}
            disabled={disabled}
            onClick={() => onDecide(reject.id, rationale)}
          >
            Reject ({reject.label ?? reject.id})
          </button>
        )}
        {decision.gate === 'task' && (
          <button
            type="button"
            className="jp-dcpilot-not-this jp-mod-styled jp-mod-reject"
            title="The task is wrong: say what it is"
            aria-expanded={notThis}
            disabled={disabled}
            onClick={() => setNotThis(!notThis)}
          >
            Not this task…
          </button>
        )}
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
      {notThis && (
        <div className="jp-dcpilot-not-this-help" role="note">
          Then say what it is: another task kind or moment of prediction is one of the options above (each
          says what it changes). Another outcome, duration or entity needs a new session set up with it.
          {onRestart && (
            <button type="button" className="jp-dcpilot-button jp-dcpilot-restart" onClick={onRestart}>
              Set up again…
            </button>
          )}
        </div>
      )}
    </div>
  );
}
