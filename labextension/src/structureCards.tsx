import * as React from 'react';

import {
  IAlternative,
  IColumnTimeline,
  IInference,
  IPlacement,
  IStructureOption,
  ITimelineColumn,
  ITimelineMove
} from './sessionApi';
import { EvidenceSource, InferenceKind, TIMELINE_GROUPS, TimelineGroup } from './vocabulary';

/** The groups of the timeline as the card names them, in time order, and what each means. */
export const GROUP_WORDS: { [group in TimelineGroup]: { title: string; meaning: string } } = {
  baseline: { title: 'Baseline', meaning: 'known when a prediction is made' },
  during_follow_up: { title: 'During follow-up', meaning: 'recorded after the prediction time' },
  at_or_after_outcome: { title: 'At or after the outcome', meaning: 'recorded with or because of it' },
  unknown: { title: 'Unknown', meaning: 'the evidence disagrees or is too weak to place it' }
};

/** Where a timing's evidence comes from, in words. */
const SOURCE_WORDS: { [source in EvidenceSource]: string } = {
  values: 'the data',
  structure: "the table's structure",
  names: 'its name',
  dictionary: 'the codebook',
  proposal: "the planner's proposal"
};

/** Where a person's move came from, in words (hosts.by_the_user, said to the person). */
const VIA_WORDS: { [via: string]: string } = {
  panel: 'in the panel',
  chat: 'in the chat',
  magic: 'with a magic',
  terminal: 'at the terminal',
  'decisions file': 'in the decisions file'
};

/** A person's move as the card says it: the chip ("moved by you") and the line saying from
 * where, through which host and why (an agent's move is the agent's). */
export function movedWords(move: ITimelineMove): { chip: string; line: string } {
  const verb = move.before === move.group ? 'confirmed' : 'moved';
  const agent = move.via.startsWith('agent ') ? move.via.slice('agent '.length) : null;
  const who = agent !== null ? `by agent ${agent}` : 'by you';
  const how = agent !== null ? who : `${who} ${VIA_WORDS[move.via] ?? `through ${move.via}`}`;
  const where =
    verb === 'confirmed'
      ? 'confirmed here'
      : move.before
        ? `moved here from ${GROUP_WORDS[move.before].title.toLowerCase()}`
        : 'moved here';
  return { chip: `${verb} ${who}`, line: `${where} ${how}${move.rationale ? `: ${move.rationale}` : ''}` };
}

/** Evidence agreeing with a column's group first, then what speaks against it; a planner's
 * proposal (Claude's, from the schema) apart: it moves nothing, the expert takes it or not. */
function evidenceOf(entry: ITimelineColumn): {
  agrees: IPlacement[];
  against: IPlacement[];
  proposal?: IPlacement;
} {
  const ruled = entry.evidence.filter(p => p.source !== 'proposal');
  const proposals = entry.evidence.filter(p => p.source === 'proposal');
  return {
    agrees: ruled.filter(p => p.group === entry.group),
    against: ruled.filter(p => p.group !== entry.group),
    proposal: proposals[proposals.length - 1]
  };
}

/** A planner's proposal for a column's place: whose, where, why, and a button that takes it. */
function ProposalLine(props: {
  column: string;
  proposal: IPlacement;
  disabled: boolean;
  onMove?: (column: string, group: TimelineGroup) => void;
}): JSX.Element {
  const { column, proposal, disabled, onMove } = props;
  const by = String(proposal.numbers.by ?? 'the planner');
  const reason = proposal.reason.includes(': ')
    ? proposal.reason.slice(proposal.reason.indexOf(': ') + 2)
    : proposal.reason;
  return (
    <div className="jp-dcpilot-timeline-proposal" data-group={proposal.group}>
      <span className="jp-dcpilot-chip">proposed by {by}</span> {GROUP_WORDS[proposal.group].title}: {reason}
      {onMove && ' '}
      {onMove && (
        <button
          type="button"
          className="jp-dcpilot-step-action jp-dcpilot-timeline-take"
          title={`Put ${column} in ${GROUP_WORDS[proposal.group].title.toLowerCase()}, as ${by} proposes`}
          disabled={disabled}
          onClick={() => onMove(column, proposal.group)}
        >
          take it
        </button>
      )}
    </div>
  );
}

/** One column of the timeline: where it is, how sure, why, and the controls that move it. */
function TimelineColumnItem(props: {
  entry: ITimelineColumn;
  disabled: boolean;
  move?: ITimelineMove;
  onMove?: (column: string, group: TimelineGroup) => void;
}): JSX.Element {
  const { entry, disabled, onMove } = props;
  const { agrees, against, proposal } = evidenceOf(entry);
  const moved = props.move && entry.confidence === 'given' ? movedWords(props.move) : null;
  const placement = (p: IPlacement, but: boolean) => (
    <li key={`${p.source}-${p.test}-${p.group}`} className={but ? 'jp-mod-against' : ''}>
      {but ? `but ${GROUP_WORDS[p.group].title.toLowerCase()}: ` : ''}
      {p.reason} <span className="jp-dcpilot-timeline-source">({SOURCE_WORDS[p.source] ?? p.source})</span>
    </li>
  );
  return (
    <li
      className="jp-dcpilot-timeline-column"
      data-column={entry.column}
      data-group={entry.group}
      data-confidence={entry.confidence}
    >
      <div className="jp-dcpilot-timeline-head">
        <code className="jp-dcpilot-timeline-name">{entry.column}</code>
        {entry.confidence === 'low' && (
          <span
            className="jp-dcpilot-chip jp-dcpilot-timeline-unsure"
            title="Only weak evidence, or it disagrees"
          >
            ⚠ to confirm
          </span>
        )}
        {entry.confidence === 'given' && (
          <span className="jp-dcpilot-chip jp-dcpilot-timeline-given">{moved?.chip ?? 'set by you'}</span>
        )}
        {onMove && (
          <span className="jp-dcpilot-timeline-controls">
            {entry.confidence === 'low' && (
              <button
                type="button"
                className="jp-dcpilot-step-action jp-dcpilot-timeline-confirm"
                title={`Confirm: ${entry.column} is ${GROUP_WORDS[entry.group].title.toLowerCase()}`}
                disabled={disabled}
                onClick={() => onMove(entry.column, entry.group)}
              >
                confirm
              </button>
            )}
            <select
              className="jp-dcpilot-timeline-move"
              aria-label={`Move ${entry.column} to another group`}
              value=""
              disabled={disabled}
              onChange={e => onMove(entry.column, e.target.value as TimelineGroup)}
            >
              <option value="">move to…</option>
              {TIMELINE_GROUPS.filter(g => g !== entry.group).map(g => (
                <option key={g} value={g}>
                  {GROUP_WORDS[g].title}
                </option>
              ))}
            </select>
          </span>
        )}
      </div>
      {agrees.length + against.length > 0 || moved ? (
        <ul className="jp-dcpilot-timeline-evidence">
          {moved && <li className="jp-dcpilot-timeline-moved">{moved.line}</li>}
          {agrees.map(p => placement(p, false))}
          {against.map(p => placement(p, true))}
        </ul>
      ) : null}
      {proposal && entry.confidence !== 'given' && (
        <ProposalLine column={entry.column} proposal={proposal} disabled={disabled} onMove={onMove} />
      )}
    </li>
  );
}

/**
 * The column timeline: every feature placed relative to the prediction time — baseline, during
 * follow-up, at or after the outcome, unknown — each with its evidence; the columns to confirm
 * marked. The expert moves a column to another group (or confirms where it is); baseline columns
 * nothing speaks about are folded into one line.
 */
export function TimelineCard(props: {
  timeline: IColumnTimeline;
  disabled?: boolean;
  onMove?: (column: string, group: TimelineGroup) => void;
}): JSX.Element {
  const { timeline, disabled = false, onMove } = props;
  const entries = Object.values(timeline.columns);
  const unsure = entries.filter(e => e.confidence === 'low');
  const lastMove = new Map((timeline.moves ?? []).map(m => [m.column, m] as const)); // the last one counts
  const items = (shown: ITimelineColumn[]): JSX.Element[] =>
    shown.map(entry => (
      <TimelineColumnItem
        key={entry.column}
        entry={entry}
        disabled={disabled}
        move={lastMove.get(entry.column)}
        onMove={onMove}
      />
    ));
  return (
    <details className="jp-dcpilot-timeline" open={unsure.length > 0} aria-label="Column timeline">
      <summary>
        When each column is known ({entries.length})
        {unsure.length > 0 && (
          <span className="jp-dcpilot-timeline-count"> · {unsure.length} to confirm</span>
        )}
      </summary>
      {timeline.index && (
        <div className="jp-dcpilot-timeline-index">Predictions are made at {timeline.index}.</div>
      )}
      {TIMELINE_GROUPS.map(group => {
        const members = entries.filter(e => e.group === group);
        // baseline by default: nothing places them later; one line, opened to move one (a column a
        // person placed is shown with their word)
        const quiet = members.filter(
          e => group === 'baseline' && e.evidence.length === 0 && e.confidence === 'high'
        );
        const shown = members.filter(e => !quiet.includes(e));
        return (
          <section key={group} className="jp-dcpilot-timeline-group" data-group={group}>
            <div className="jp-dcpilot-timeline-group-title">
              <b>{GROUP_WORDS[group].title}</b> ({members.length}){' '}
              <span className="jp-dcpilot-timeline-meaning">{GROUP_WORDS[group].meaning}</span>
            </div>
            <ul className="jp-dcpilot-timeline-columns">{items(shown)}</ul>
            {quiet.length > 0 && (
              <details className="jp-dcpilot-timeline-quiet">
                <summary>
                  {quiet.map(e => e.column).join(', ')}: nothing places {quiet.length === 1 ? 'it' : 'them'}{' '}
                  after the prediction time
                </summary>
                <ul className="jp-dcpilot-timeline-columns">{items(quiet)}</ul>
              </details>
            )}
          </section>
        );
      })}
    </details>
  );
}

/** What a structural question asks, per kind of inference. */
const QUESTIONS: { [what in InferenceKind]: (subject: string | null) => string } = {
  task: () => 'What kind of task is this?',
  duration: () => 'Which column is the follow-up time?',
  entity: () => 'Which column says whose record each row is?',
  index: () => 'When is a prediction made?',
  join_key: subject => `Which column joins ${subject ?? 'the files'}?`,
  grouping: subject => `What should be done with '${subject}', which groups rows?`,
  timing: subject => `When is '${subject}' known?`
};

/** An inferred value in words: no entity is "none", a timeline group its title. */
export function inferenceValue(what: InferenceKind, value: unknown): string {
  if (value === null || value === undefined) {
    return what === 'entity' ? 'none: each row is its own subject' : 'none';
  }
  if (what === 'timing' && typeof value === 'string' && value in GROUP_WORDS) {
    return GROUP_WORDS[value as TimelineGroup].title;
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The code of a status of several codes that the task reads as censored (its alternatives are
 * the other codes censored, "survival with 3 censored"), or null for any other inference. */
function censoredCode(inference: IInference): string | null {
  const code = inference.details?.censored;
  return inference.what === 'task' && typeof code === 'string' ? code : null;
}

/**
 * A structural choice the diagnosis made with low confidence, asked: its value and evidence,
 * the alternatives ranked with theirs, and one button each (keep it, or take another).
 */
export function StructureQuestion(props: {
  inference: IInference;
  disabled?: boolean;
  onAnswer?: (value: unknown) => void;
}): JSX.Element {
  const { inference, disabled = false, onAnswer } = props;
  const { what } = inference;
  if (inference.options && inference.options.length > 0) {
    return <CardQuestion inference={inference} disabled={disabled} onAnswer={onAnswer} />;
  }
  const ranked = [...inference.alternatives].sort((a, b) => b.score - a.score);
  // a status of several codes: the guess names its censoring code, as its alternatives do
  const censored = censoredCode(inference);
  const label = (value: unknown, chosen: boolean) =>
    chosen && censored !== null
      ? `${inferenceValue(what, value)} with ${censored} censored`
      : inferenceValue(what, value);
  const choice = (value: unknown, evidence: string[], chosen: boolean, alternative?: IAlternative) => (
    <li
      key={JSON.stringify(value)}
      className={`jp-dcpilot-structure-choice${chosen ? ' jp-mod-chosen' : ''}`}
      data-value={JSON.stringify(value)}
    >
      <div className="jp-dcpilot-structure-value">
        <b>{label(value, chosen)}</b>
        {chosen && <span className="jp-dcpilot-chip">the co-pilot&apos;s guess</span>}
        {onAnswer && (
          <button
            type="button"
            className={`jp-dcpilot-option${chosen ? ' jp-mod-recommended' : ''}`}
            disabled={disabled}
            onClick={() => onAnswer(value)}
          >
            {chosen ? 'Keep it' : 'Use this'}
          </button>
        )}
      </div>
      <EvidenceList lines={alternative && evidence.length === 0 ? ['no evidence for it'] : evidence} />
    </li>
  );
  const question =
    censored !== null
      ? 'Which code means censored, or is it another task?'
      : QUESTIONS[what](inference.subject);
  return (
    <QuestionFrame inference={inference} question={question}>
      <ol className="jp-dcpilot-structure-choices">
        {choice(inference.value, inference.evidence, true)}
        {ranked.map(a => choice(a.value, a.evidence, false, a))}
      </ol>
    </QuestionFrame>
  );
}

/**
 * A structural question asked with the task card's own options (the rows in blocks of one
 * entity's records): why it is unsure, then each option as the card words it, one button each;
 * the value in force is kept, another one is the card's answer.
 */
function CardQuestion(props: {
  inference: IInference;
  disabled: boolean;
  onAnswer?: (value: unknown) => void;
}): JSX.Element {
  const { inference, disabled, onAnswer } = props;
  const inForce = JSON.stringify(inference.value);
  const choice = (option: IStructureOption) => {
    const chosen = JSON.stringify(option.value) === inForce;
    return (
      <li
        key={option.id}
        className={`jp-dcpilot-structure-choice${chosen ? ' jp-mod-chosen' : ''}`}
        data-value={JSON.stringify(option.value)}
      >
        <div className="jp-dcpilot-structure-value">
          <b>{option.label}</b>
          {chosen && <span className="jp-dcpilot-chip">in force</span>}
          {option.recommended && <span className="jp-dcpilot-chip">recommended</span>}
          {onAnswer && (
            <button
              type="button"
              className={`jp-dcpilot-option${option.recommended ? ' jp-mod-recommended' : ''}`}
              disabled={disabled}
              onClick={() => onAnswer(option.value)}
            >
              {chosen ? 'Keep it' : 'Use this'}
            </button>
          )}
        </div>
        <EvidenceList
          lines={option.risk ? [option.description, `risk: ${option.risk}`] : [option.description]}
        />
      </li>
    );
  };
  return (
    <QuestionFrame inference={inference} question="Are the rows in blocks of one entity's records?">
      <EvidenceList lines={inference.evidence} />
      <ol className="jp-dcpilot-structure-choices">{(inference.options ?? []).map(choice)}</ol>
    </QuestionFrame>
  );
}

/** The frame both kinds of structural question share: the gate's chip, the question, then the body. */
function QuestionFrame(props: {
  inference: IInference;
  question: string;
  children: React.ReactNode;
}): JSX.Element {
  const { inference, question, children } = props;
  return (
    <div
      className="jp-dcpilot-decision jp-dcpilot-structure"
      data-inference={inference.id}
      data-what={inference.what}
      data-confidence={inference.confidence}
    >
      <div className="jp-dcpilot-decision-head">
        <span className="jp-dcpilot-chip jp-dcpilot-gate">structure</span>
        <span className="jp-dcpilot-decision-title">unsure: please confirm</span>
      </div>
      <div className="jp-dcpilot-question">{question}</div>
      {children}
    </div>
  );
}

/** Evidence lines, keyed by position: two lines may read the same (one test on two columns). */
function EvidenceList(props: { lines: string[] }): JSX.Element {
  return (
    <ul className="jp-dcpilot-structure-evidence">
      {props.lines.map((line, i) => (
        <li key={i}>{line}</li>
      ))}
    </ul>
  );
}
