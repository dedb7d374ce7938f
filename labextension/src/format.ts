/** Human-readable byte counts: 1536 → "1.5 KB". */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) {
    return 'not in memory';
  }
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 10 ? 0 : 1;
  return `${value.toFixed(digits)} ${units[unit]}`;
}

/** Thousands separators for row counts: 12345 → "12,345". */
export function formatCount(count: number | null): string {
  return count === null ? '?' : count.toLocaleString('en-US');
}

/** A share in [0, 1] as a percentage: 0.1234 → "12.3%". */
export function formatShare(share: number): string {
  if (share === 0) {
    return '0%';
  }
  if (share < 0.001) {
    return '<0.1%';
  }
  return `${(share * 100).toFixed(1)}%`;
}
