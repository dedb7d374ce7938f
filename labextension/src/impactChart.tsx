import * as React from 'react';

import { formatValue } from './chart';
import { IDecision, IImpact, IDecisionOption } from './sessionApi';

/** Height of one option's row, in pixels. */
const ROW = 20;
/** The label column ends, and the bars start and end, at these percentages of the width. */
const LABEL_END = 30;
const BAR_START = 32;
const BAR_END = 78;

/** What the metric is called on the card. */
const METRIC_NAMES: { [metric: string]: string } = {
  roc_auc: 'AUROC',
  r2: 'R²',
  c_index: 'C-index'
};

function scored(option: IDecisionOption): IImpact | null {
  const impact = option.impact;
  return impact && typeof impact.mean === 'number' && Number.isFinite(impact.mean) ? impact : null;
}

/** Options ordered by their estimated mean score, best first (unestimated ones last). */
export function rankedOptions(decision: IDecision): IDecisionOption[] {
  const value = (o: IDecisionOption) => scored(o)?.mean ?? -Infinity;
  return [...decision.options].sort((a, b) => value(b) - value(a));
}

/** A score with its spread: 0.7123, 0.0104 → "0.712 ± 0.010". */
export function formatScore(impact: IImpact): string {
  const mean = (impact.mean as number).toFixed(3);
  return typeof impact.sd === 'number' ? `${mean} ± ${impact.sd.toFixed(3)}` : mean;
}

/**
 * What each option of a decision would do to the model: its cross-validated score over
 * bootstrap perturbations (mean and spread) side by side, the rows and columns it keeps, its top
 * features and what would make the model not valid. Fills in as the estimates arrive; the
 * estimate can be stopped (it takes the kernel's time) and started again.
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
  const name = METRIC_NAMES[metric] ?? metric;
  // the axis spans the estimates (and their spread), so small differences stay visible: its ends are labelled
  const lows = values.map(i => (i.mean as number) - (i.sd ?? 0));
  const highs = values.map(i => (i.mean as number) + (i.sd ?? 0));
  const pad = values.length ? Math.max(0.01, (Math.max(...highs) - Math.min(...lows)) * 0.1) : 0;
  const lo = values.length ? Math.max(metric === 'r2' ? -Infinity : 0, Math.min(...lows) - pad) : 0;
  const hi = values.length ? Math.min(metric === 'r2' ? Infinity : 1, Math.max(...highs) + pad) : 1;
  const x = (v: number) => BAR_START + ((BAR_END - BAR_START) * (v - lo)) / (hi - lo || 1);
  const height = options.length * ROW + 16;
  const running = summary.status === 'running';
  return (
    <figure
      className="jp-dcpilot-impact"
      data-status={summary.status}
      aria-label="What each option does to the model"
    >
      <figcaption className="jp-dcpilot-impact-title">
        <span>
          What each option does to the model
          {name ? ` (${name}, ${summary.perturbations ?? 5} perturbations)` : ''}
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
      <svg width="100%" height={height} role="img" className="jp-dcpilot-impact-svg">
        {options.map((option, i) => {
          const y = i * ROW + 2;
          const impact = scored(option);
          const best = impact !== null && option.id === summary.best;
          const flagged = (option.impact?.flags ?? []).length > 0;
          return (
            <g
              key={option.id}
              className="jp-dcpilot-impact-row"
              data-option={option.id}
              data-mean={impact ? (impact.mean ?? '') : ''}
            >
              <title>
                {impact
                  ? `${option.label ?? option.id}: ${name} ${formatScore(impact)}`
                  : (option.label ?? option.id)}
              </title>
              <text
                x={`${LABEL_END}%`}
                y={y + ROW / 2 - 2}
                textAnchor="end"
                dominantBaseline="central"
                className="jp-dcpilot-chart-label"
              >
                {option.label ?? option.id}
              </text>
              {impact ? (
                <>
                  <rect
                    x={`${BAR_START}%`}
                    y={y + 3}
                    width={`${Math.max(x(impact.mean as number) - BAR_START, 0.5)}%`}
                    height={ROW - 10}
                    rx={2}
                    className={`jp-dcpilot-impact-bar${best ? ' jp-mod-best' : ''}${flagged ? ' jp-mod-flagged' : ''}`}
                  />
                  {typeof impact.sd === 'number' && (
                    <line
                      className="jp-dcpilot-impact-sd"
                      x1={`${x((impact.mean as number) - impact.sd)}%`}
                      x2={`${x((impact.mean as number) + impact.sd)}%`}
                      y1={y + ROW / 2 - 2}
                      y2={y + ROW / 2 - 2}
                    />
                  )}
                  <text
                    x={`${BAR_END + 1}%`}
                    y={y + ROW / 2 - 2}
                    dominantBaseline="central"
                    className="jp-dcpilot-chart-value"
                  >
                    {formatScore(impact)}
                  </text>
                </>
              ) : (
                <text
                  x={`${BAR_START}%`}
                  y={y + ROW / 2 - 2}
                  dominantBaseline="central"
                  className="jp-dcpilot-chart-value"
                >
                  {option.impact?.error ? 'could not be estimated' : running ? '…' : 'not estimated'}
                </text>
              )}
            </g>
          );
        })}
        {values.length > 0 && (
          <g className="jp-dcpilot-impact-axis">
            <text x={`${BAR_START}%`} y={height - 3} className="jp-dcpilot-chart-value">
              {formatValue(lo)}
            </text>
            <text x={`${BAR_END}%`} y={height - 3} textAnchor="end" className="jp-dcpilot-chart-value">
              {formatValue(hi)}
            </text>
          </g>
        )}
      </svg>
      {summary.note && (
        <div className={`jp-dcpilot-impact-note${summary.barely_differ ? ' jp-mod-barely' : ''}`}>
          {summary.barely_differ ? 'These options barely differ: ' : ''}
          {summary.note}
        </div>
      )}
      {summary.error && <div className="jp-dcpilot-step-error">{summary.error}</div>}
      <ul className="jp-dcpilot-impact-details">
        {done.map(option => {
          const impact = option.impact as IImpact;
          return (
            <li key={option.id} data-option={option.id}>
              <b>{option.label ?? option.id}</b>:{' '}
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
