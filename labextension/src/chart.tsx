import * as React from 'react';

import { IChart } from './sessionApi';

/** Bars drawn at most; the rest are counted under the chart. */
export const MAX_BARS = 12;
/** Height of one bar row, in pixels. */
const ROW = 18;
/** The label column, the bar area and the value column, in percent of the chart's width. */
const LABEL_END = 36;
const BAR_START = 38;
const BAR_END = 80;
/** Labels up to this length sit left of their bar; longer ones get a line of their own above it. */
const MAX_LABEL = 12;
/** Height of a row whose label sits above its bar. */
const STACKED_ROW = 30;

/** A number as a short label: 0.98765 → "0.988", 1234 → "1,234"; shares as percentages. */
export function formatValue(value: number, unit = ''): string {
  if (!Number.isFinite(value)) {
    return String(value);
  }
  if (/share/i.test(unit) && value >= 0 && value <= 1) {
    const percent = value * 100;
    return `${percent < 10 && percent !== 0 ? percent.toFixed(1) : percent.toFixed(0)}%`;
  }
  if (Number.isInteger(value)) {
    return value.toLocaleString('en-US');
  }
  return Math.abs(value) >= 100 ? value.toFixed(0) : String(Number(value.toPrecision(3)));
}

/**
 * A decision's evidence as a horizontal bar chart in plain SVG: one bar per column or class,
 * and the threshold the engine judged against as a dashed line. Bars at or over the threshold
 * take the warning colour. Only JupyterLab's CSS variables (set in base.css), so dark themes work.
 */
export function BarChart(props: { chart: IChart }): JSX.Element | null {
  const { chart } = props;
  const bars = chart.bars.filter(b => typeof b.value === 'number' && Number.isFinite(b.value));
  if (bars.length === 0) {
    return null;
  }
  const shown = bars.slice(0, MAX_BARS);
  const threshold =
    typeof chart.threshold === 'number' && Number.isFinite(chart.threshold) ? chart.threshold : null;
  const top = Math.max(...shown.map(b => b.value), threshold ?? 0);
  const scale = top > 0 ? top : 1;
  // long labels (e.g. "best other feature") get their own line, so none is ever cut
  const stacked = shown.some(b => b.label.length > MAX_LABEL);
  const start = stacked ? 0 : BAR_START;
  const row = stacked ? STACKED_ROW : ROW;
  const x = (value: number) => start + ((BAR_END - start) * Math.max(0, value)) / scale;
  const format = (value: number) => formatValue(value, chart.unit);
  const bottom = shown.length * row + 2;
  const height = bottom + (threshold === null ? 2 : 14);
  const title =
    chart.unit && !chart.title.includes(chart.unit) ? `${chart.title} (${chart.unit})` : chart.title;
  return (
    <figure className="jp-dcpilot-chart" data-layout={stacked ? 'stacked' : 'side'}>
      <figcaption className="jp-dcpilot-chart-title">{title}</figcaption>
      <svg width="100%" height={height} role="img" aria-label={title} className="jp-dcpilot-chart-svg">
        {shown.map((bar, i) => {
          const y = i * row + 2;
          const barY = stacked ? y + 15 : y + 3;
          const barHeight = stacked ? 10 : ROW - 6;
          const over = threshold !== null && bar.value >= threshold;
          return (
            <g key={`${bar.label}-${i}`} className="jp-dcpilot-chart-row" data-label={bar.label}>
              <title>{`${bar.label}: ${format(bar.value)}${chart.unit ? ` ${chart.unit}` : ''}`}</title>
              <text
                x={stacked ? '0%' : `${LABEL_END}%`}
                y={stacked ? y + 6 : barY + barHeight / 2}
                textAnchor={stacked ? 'start' : 'end'}
                dominantBaseline="central"
                className="jp-dcpilot-chart-label"
              >
                {bar.label}
              </text>
              <rect
                x={`${start}%`}
                y={barY}
                width={`${Math.max(x(bar.value) - start, 0.5)}%`}
                height={barHeight}
                rx={2}
                className={`jp-dcpilot-chart-bar${over ? ' jp-mod-over' : ''}`}
              />
              <text
                x={`${x(bar.value) + 1}%`}
                y={barY + barHeight / 2}
                dominantBaseline="central"
                className="jp-dcpilot-chart-value"
              >
                {format(bar.value)}
              </text>
            </g>
          );
        })}
        {threshold !== null && (
          <g className="jp-dcpilot-chart-threshold" data-threshold={threshold}>
            <line x1={`${x(threshold)}%`} x2={`${x(threshold)}%`} y1={0} y2={bottom} />
            <text
              x={`${x(threshold)}%`}
              y={bottom + 10}
              textAnchor="middle"
              className="jp-dcpilot-chart-value"
            >
              {`threshold ${format(threshold)}`}
            </text>
          </g>
        )}
      </svg>
      {bars.length > shown.length && (
        <div className="jp-dcpilot-chart-more">+{bars.length - shown.length} more not shown</div>
      )}
    </figure>
  );
}
