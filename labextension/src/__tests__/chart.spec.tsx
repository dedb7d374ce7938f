import * as React from 'react';
import { render } from '@testing-library/react';

import { BarChart, formatValue, MAX_BARS } from '../chart';
import { IChart } from '../sessionApi';

const leakage: IChart = {
  title: 'Single-feature AUROC per column',
  unit: 'AUROC',
  bars: [
    { label: 'leak', value: 0.99 },
    { label: 'a', value: 0.52 },
    { label: 'b', value: 0.495 }
  ],
  threshold: 0.9
};

function percent(attribute: string | null): number {
  return Number((attribute ?? '').replace('%', ''));
}

describe('BarChart', () => {
  it('draws one bar per label, proportional to its value, and the threshold', () => {
    render(<BarChart chart={leakage} />);
    // the unit is named once (it is already in this title)
    expect(document.querySelector('figcaption')?.textContent).toBe('Single-feature AUROC per column');
    expect(document.querySelector('.jp-dcpilot-chart')?.getAttribute('data-layout')).toBe('side');
    const rows = Array.from(document.querySelectorAll('.jp-dcpilot-chart-row'));
    expect(rows.map(r => r.getAttribute('data-label'))).toEqual(['leak', 'a', 'b']);
    const widths = rows.map(r => percent(r.querySelector('rect')!.getAttribute('width')));
    // the largest value spans the whole bar area; the others in proportion
    expect(widths[1] / widths[0]).toBeCloseTo(0.52 / 0.99, 3);
    expect(widths[2] / widths[0]).toBeCloseTo(0.495 / 0.99, 3);
    // only the bar over the threshold takes the warning colour
    expect(rows.map(r => r.querySelector('rect')!.classList.contains('jp-mod-over'))).toEqual([
      true,
      false,
      false
    ]);
    expect(rows[0].querySelector('title')?.textContent).toBe('leak: 0.99 AUROC');
    expect(rows.map(r => r.querySelector('.jp-dcpilot-chart-value')?.textContent)).toEqual([
      '0.99',
      '0.52',
      '0.495'
    ]);

    const line = document.querySelector('.jp-dcpilot-chart-threshold line')!;
    const barStart = percent(rows[0].querySelector('rect')!.getAttribute('x'));
    expect(percent(line.getAttribute('x1')) - barStart).toBeCloseTo((widths[0] * 0.9) / 0.99, 3);
    expect(document.querySelector('.jp-dcpilot-chart-threshold')?.textContent).toBe('threshold 0.9');
    // styled by theme variables (classes), not by hard-coded colours
    expect(document.querySelector('svg')?.innerHTML).not.toMatch(/fill="#|stroke="#/);
  });

  it('scales to the threshold when it is above every bar, and draws no line without one', () => {
    const { unmount } = render(
      <BarChart chart={{ ...leakage, bars: [{ label: 'x', value: 0.5 }], threshold: 1 }} />
    );
    expect(
      percent(document.querySelector('.jp-dcpilot-chart-threshold line')!.getAttribute('x1'))
    ).toBeGreaterThan(
      percent(document.querySelector('rect')!.getAttribute('x')) +
        percent(document.querySelector('rect')!.getAttribute('width'))
    );
    unmount();
    render(<BarChart chart={{ ...leakage, threshold: null }} />);
    expect(document.querySelector('.jp-dcpilot-chart-threshold')).toBeNull();
    expect(document.querySelectorAll('.jp-mod-over')).toHaveLength(0);
  });

  it('caps the number of bars, puts long labels on their own line and skips non-numbers', () => {
    const bars = Array.from({ length: MAX_BARS + 3 }, (_, i) => ({
      label: `a_very_long_column_name_${i}`,
      value: i / 100
    }));
    bars.push({ label: 'broken', value: NaN });
    render(
      <BarChart chart={{ title: 'Missing values per column', unit: 'share of rows', bars, threshold: 0.6 }} />
    );
    expect(document.querySelector('figcaption')?.textContent).toBe(
      'Missing values per column (share of rows)'
    );
    expect(document.querySelectorAll('.jp-dcpilot-chart-row')).toHaveLength(MAX_BARS);
    expect(document.querySelector('.jp-dcpilot-chart-more')?.textContent).toBe('+3 more not shown');
    // never cut: the label sits above its bar, which starts at the left edge
    expect(document.querySelector('.jp-dcpilot-chart')?.getAttribute('data-layout')).toBe('stacked');
    expect(document.querySelector('.jp-dcpilot-chart-label')?.textContent).toBe('a_very_long_column_name_0');
    expect(document.querySelector('rect')?.getAttribute('x')).toBe('0%');
    // shares read as percentages
    const values = Array.from(document.querySelectorAll('.jp-dcpilot-chart-row .jp-dcpilot-chart-value'));
    expect(values[1].textContent).toBe('1.0%');
    expect(document.querySelector('.jp-dcpilot-chart-threshold text')?.textContent).toBe('threshold 60%');
  });

  it('draws nothing for an empty chart', () => {
    const { container } = render(<BarChart chart={{ title: 't', unit: '', bars: [], threshold: 0.5 }} />);
    expect(container.innerHTML).toBe('');
  });
});

describe('formatValue', () => {
  it('keeps three significant digits and groups thousands', () => {
    expect(formatValue(0.98765)).toBe('0.988');
    expect(formatValue(12345)).toBe('12,345');
    expect(formatValue(123.456)).toBe('123');
    expect(formatValue(0.05)).toBe('0.05');
    expect(formatValue(0.35, 'share of rows')).toBe('35%');
    expect(formatValue(0.004, 'share of rows')).toBe('0.4%');
    expect(formatValue(3, 'rows')).toBe('3');
  });
});
