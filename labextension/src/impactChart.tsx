import * as React from 'react';

import { formatValue } from './chart';
import { IDecision, IImpact, IDecisionOption } from './sessionApi';
import { METRIC_WORDS } from './vocabulary';

/** A metric as a reader names it: "c_index" → "C-index"; an unknown one without underscores. */
export function metricWords(metric: string): string {
  return METRIC_WORDS[metric] ?? metric.replace(/_/g, ' ');
}

/** A note of an older server that names the metric by its id ("changes the c_index"): in words. */
function inWords(note: string): string {
  return note.replace(/\b[a-z_0-9]+\b/g, word => METRIC_WORDS[word] ?? word);
}

function scored(option: IDecisionOption): IImpact | null {
  const impact = option.impact;
  return impact && typeof impact.mean === 'number' && Number.isFinite(impact.mean) ? impact : null;
}

/** True when the estimate found what would make a model on this option not valid. */
export function isFlagged(option: IDecisionOption): boolean {
  return (option.impact?.flags ?? []).length > 0;
}

/** Options ordered by their estimated mean score, best first (unestimated ones last). */
export function rankedOptions(decision: IDecision): IDecisionOption[] {
  const value = (o: IDecisionOption) => scored(o)?.mean ?? -Infinity;
  return [...decision.options].sort((a, b) => value(b) - value(a));
}

/**
 * The option with the best score among those that leave a valid model (no flag): a leaked
 * column's 0.99 is not "best". Null before any unflagged option is scored.
 */
export function bestOption(decision: IDecision): string | null {
  const best = rankedOptions(decision).find(o => scored(o) !== null && !isFlagged(o));
  return best?.id ?? null;
}

/** A score with its spread: 0.7123, 0.0104 → "0.712 ± 0.010". */
export function formatScore(impact: IImpact): string {
  const mean = (impact.mean as number).toFixed(3);
  return typeof impact.sd === 'number' ? `${mean} ± ${impact.sd.toFixed(3)}` : mean;
}

/** The axis of the bars: it spans the estimates and their spread, so small differences show. */
function axis(values: IImpact[], metric: string): { lo: number; hi: number } {
  if (values.length === 0) {
    return { lo: 0, hi: 1 };
  }
  const lows = values.map(i => (i.mean as number) - (i.sd ?? 0));
  const highs = values.map(i => (i.mean as number) + (i.sd ?? 0));
  const pad = Math.max(0.01, (Math.max(...highs) - Math.min(...lows)) * 0.1);
  // R² can be negative; the other metrics live in [0, 1]
  const lo = Math.max(metric === 'r2' ? -Infinity : 0, Math.min(...lows) - pad);
  const hi = Math.min(metric === 'r2' ? Infinity : 1, Math.max(...highs) + pad);
  return { lo, hi };
}

/** One option's row: its label (wrapped, never cut) with its marks and score, then its bar. */
function ImpactRow(props: {
  option: IDecisionOption;
  metric: string;
  at: (value: number) => number;
  best: boolean;
  recommended: boolean;
  proposed: boolean;
  running: boolean;
}): JSX.Element {
  const { option, metric, at, best, recommended, proposed, running } = props;
  const impact = scored(option);
  const flags = option.impact?.flags ?? [];
  const label = option.label || option.id;
  const tip = [
    impact ? `${label}: ${metricWords(metric)} ${formatScore(impact)}` : label,
    ...flags.map(flag => `⚠ ${flag}`)
  ].join('\n');
  return (
    <li
      className="jp-dcpilot-impact-row"
      data-option={option.id}
      data-mean={impact ? (impact.mean ?? '') : ''}
      data-best={best ? 'yes' : 'no'}
      data-recommended={recommended ? 'yes' : 'no'}
      data-flagged={flags.length ? 'yes' : 'no'}
      title={tip}
    >
      <div className="jp-dcpilot-impact-label">
        <span className="jp-dcpilot-impact-name">{label}</span>
        {recommended && <span className="jp-dcpilot-chip jp-dcpilot-impact-recommended">recommended</span>}
        {proposed && (
          <span className="jp-dcpilot-chip jp-dcpilot-impact-proposed">agent&apos;s proposal</span>
        )}
        {best && <span className="jp-dcpilot-chip jp-dcpilot-impact-best">best valid score</span>}
        {flags.length > 0 && <span className="jp-dcpilot-chip jp-dcpilot-impact-invalid">⚠ not valid</span>}
        <span className={`jp-dcpilot-impact-value${impact ? '' : ' jp-mod-missing'}`}>
          {impact
            ? formatScore(impact)
            : option.impact?.error
              ? 'could not be estimated'
              : running
                ? '…'
                : 'not estimated'}
        </span>
      </div>
      {impact && (
        <div className="jp-dcpilot-impact-track">
          <div
            className={`jp-dcpilot-impact-bar${best ? ' jp-mod-best' : ''}${flags.length ? ' jp-mod-flagged' : ''}`}
            style={{ width: `${Math.max(at(impact.mean as number), 0.5)}%` }}
          />
          {typeof impact.sd === 'number' && (
            <div
              className="jp-dcpilot-impact-sd"
              style={{
                left: `${at((impact.mean as number) - impact.sd)}%`,
                width: `${at((impact.mean as number) + impact.sd) - at((impact.mean as number) - impact.sd)}%`
              }}
            />
          )}
        </div>
      )}
    </li>
  );
}

/**
 * What each option of a decision would do to the model: its cross-validated score over
 * bootstrap perturbations (mean and spread) side by side, the rows and columns it keeps, its top
 * features and what would make the model not valid. The recommended option is marked, and the
 * best score only among the options that leave a valid model. Labels wrap at any width. Fills in
 * as the estimates arrive; the estimate can be stopped (it takes the kernel's time) and started again.
 */
export function ImpactChart(props: {
  decision: IDecision;
  onEstimate?: (action: 'start' | 'cancel') => void;
}): JSX.Element | null {
  const { decision, onEstimate } = props;
  const summary = decision.impact;
  if (!summary) {
    return null;
  }
  // "skip" leaves the data as "keep" does: one bar for both
  const unchanged = decision.options.some(o => o.id !== 'skip' && !o.action);
  const options = decision.options.filter(o => o.id !== 'skip' || !unchanged);
  const done = options.filter(o => o.impact);
  const values = done.map(scored).filter((i): i is IImpact => i !== null);
  const metric = values[0]?.metric ?? done[0]?.impact?.metric ?? '';
  const { lo, hi } = axis(values, metric);
  const at = (v: number) => (100 * (Math.min(Math.max(v, lo), hi) - lo)) / (hi - lo || 1);
  const running = summary.status === 'running';
  const best = bestOption(decision);
  const recommended = decision.recommended ?? decision.options.find(o => o.recommended)?.id ?? null;
  return (
    <figure
      className="jp-dcpilot-impact"
      data-status={summary.status}
      aria-label="What each option does to the model"
    >
      <figcaption className="jp-dcpilot-impact-title">
        <span>
          What each option does to the model
          {metric ? ` (${metricWords(metric)}, ${summary.perturbations ?? 5} perturbations)` : ''}
        </span>
        {running && (
          <span className="jp-dcpilot-impact-status">
            <span className="jp-dcpilot-spinner" aria-hidden="true" /> estimating {done.length}/
            {options.length}
          </span>
        )}
        {onEstimate && running && (
          <button
            type="button"
            className="jp-dcpilot-impact-cancel jp-dcpilot-link"
            title="Stop estimating (it uses the kernel's time)"
            onClick={() => onEstimate('cancel')}
          >
            stop
          </button>
        )}
        {onEstimate && (summary.status === 'cancelled' || summary.status === 'failed') && (
          <button
            type="button"
            className="jp-dcpilot-impact-start jp-dcpilot-link"
            onClick={() => onEstimate('start')}
          >
            estimate again
          </button>
        )}
      </figcaption>
      <ol className="jp-dcpilot-impact-rows">
        {options.map(option => (
          <ImpactRow
            key={option.id}
            option={option}
            metric={metric}
            at={at}
            best={option.id === best}
            recommended={option.id === recommended}
            proposed={option.id === decision.proposal?.choice}
            running={running}
          />
        ))}
      </ol>
      {values.length > 0 && (
        <div className="jp-dcpilot-impact-axis" aria-hidden="true">
          <span>{formatValue(lo)}</span>
          <span>{formatValue(hi)}</span>
        </div>
      )}
      {summary.note && (
        <div className={`jp-dcpilot-impact-note${summary.barely_differ ? ' jp-mod-barely' : ''}`}>
          {summary.barely_differ ? 'These options barely differ: ' : ''}
          {inWords(summary.note)}
        </div>
      )}
      {summary.error && <div className="jp-dcpilot-step-error">{summary.error}</div>}
      <ul className="jp-dcpilot-impact-details">
        {done.map(option => {
          const impact = option.impact as IImpact;
          return (
            <li key={option.id} data-option={option.id}>
              <b>{option.label || option.id}</b>:{' '}
              {impact.error
                ? impact.error
                : `${impact.rows?.toLocaleString('en-US')} rows × ${impact.columns} columns` +
                  (impact.top_features.length ? `; top: ${impact.top_features.slice(0, 3).join(', ')}` : '')}
              {impact.flags.map(flag => (
                <div key={flag} className="jp-dcpilot-impact-flag">
                  ⚠ {flag}
                </div>
              ))}
            </li>
          );
        })}
      </ul>
    </figure>
  );
}
