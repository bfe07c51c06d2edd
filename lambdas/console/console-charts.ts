/**
 * Charts for the analytics page, drawn on the server as SVG: no script, no inline
 * style (colours are classes in `assets/console.css`, everything else presentation
 * attributes), a viewBox with width and height so the page does not move as it
 * loads and the chart scales down to a phone. A chart is never the only place a
 * number is: the per-day chart is followed by a table of the same numbers, and a
 * meter only stands beside the number it draws.
 */
import type { AnalyticsReport, DayCount, SearchMode } from '../analytics/search-analytics.ts';
import { h, join, table, type Html } from './console-page.ts';

/** One bar: a day, or a run of days when the window is long. */
export interface Bucket {
  /** The first day (`YYYY-MM-DD`). */
  readonly from: string;
  /** The last day, the same as `from` for a single day. */
  readonly to: string;
  readonly hybrid: number;
  readonly keyword_fallback: number;
  readonly no_match: number;
  readonly degraded: number;
  readonly searches: number;
}

const STACK: readonly { mode: SearchMode; label: string }[] = [
  { mode: 'hybrid', label: 'hybrid' },
  { mode: 'keyword_fallback', label: 'keyword fallback' },
  { mode: 'no_match', label: 'no match' },
];

const WIDTH = 640;
const HEIGHT = 260;
const PLOT = { left: 44, right: 8, top: 12, bottom: 36 } as const;

/** A share 0..1 as a percentage with one decimal. */
export const percent = (share: number) => `${(share * 100).toFixed(1)}%`;

/** Days per bar: one bar a day up to two months, then weeks, then 30-day runs. */
export const bucketSize = (days: number) => (days <= 62 ? 1 : days <= 730 ? 7 : 30);

/** The per-day counts summed into runs of `size` days, oldest first. */
export function bucketsOf(perDay: readonly DayCount[], size: number): Bucket[] {
  const out: Bucket[] = [];
  for (let i = 0; i < perDay.length; i += size) {
    const run = perDay.slice(i, i + size);
    const sum = (pick: (d: DayCount) => number) => run.reduce((total, d) => total + pick(d), 0);
    out.push({
      from: run[0]!.day,
      to: run[run.length - 1]!.day,
      hybrid: sum((d) => d.hybrid),
      keyword_fallback: sum((d) => d.keyword_fallback),
      no_match: sum((d) => d.no_match),
      degraded: sum((d) => d.degraded),
      searches: sum((d) => d.searches),
    });
  }
  return out;
}

/** The top of the scale: the smallest 1, 2 or 5 times a power of ten at or above `max` (at least 1). */
export function niceMax(max: number): number {
  if (max <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((step) => step * power).find((top) => top >= max)!;
}

const fixed = (n: number) => Math.round(n * 100) / 100;

function bars(buckets: readonly Bucket[], top: number): Html {
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const slot = plotWidth / buckets.length;
  const width = fixed(slot >= 4 ? slot * 0.8 : slot);
  const rects = buckets.flatMap((bucket, i) => {
    let base = HEIGHT - PLOT.bottom;
    return STACK.filter(({ mode }) => bucket[mode] > 0).map(({ mode }) => {
      const height = (bucket[mode] / top) * plotHeight;
      base -= height;
      return h`<rect class="bar-${mode}" x="${fixed(PLOT.left + i * slot)}" y="${fixed(base)}" width="${width}" height="${fixed(height)}"></rect>`;
    });
  });
  return join(rects);
}

function axes(buckets: readonly Bucket[], top: number): Html {
  const bottom = HEIGHT - PLOT.bottom;
  const ticks = Number.isInteger(top / 2) ? [0, top / 2, top] : [0, top];
  const tickMarks = ticks.map((tick) => {
    const y = fixed(bottom - (tick / top) * (bottom - PLOT.top));
    return h`<line class="grid" x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${y}" y2="${y}"></line><text x="${PLOT.left - 6}" y="${fixed(y + 4)}" text-anchor="end">${tick}</text>`;
  });
  const first = buckets[0]!;
  const last = buckets[buckets.length - 1]!;
  return h`${join(tickMarks)}
<line class="axis" x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${bottom}" y2="${bottom}"></line>
<text x="${PLOT.left}" y="${HEIGHT - 12}" text-anchor="start">${first.from}</text>
${buckets.length > 1 ? h`<text x="${WIDTH - PLOT.right}" y="${HEIGHT - 12}" text-anchor="end">${last.to}</text>` : ''}`;
}

function perDayTable(buckets: readonly Bucket[], unit: string): Html {
  const rows = buckets.map(
    (b) =>
      h`<tr><th scope="row">${b.from === b.to ? b.from : `${b.from} to ${b.to}`}</th><td>${b.hybrid}</td><td>${b.keyword_fallback}</td><td>${b.no_match}</td><td>${b.searches}</td><td>${b.degraded}</td></tr>`,
  );
  return table(`Searches per ${unit} by mode: the numbers in the chart`, [unit === 'day' ? 'Day (UTC)' : 'Days (UTC)', 'Hybrid', 'Keyword fallback', 'No match', 'All searches', 'Degraded'], rows);
}

/** Searches per day (or per run of days) stacked by mode, then the same numbers as a table. */
export function perDayChart(report: AnalyticsReport): Html {
  if (report.searches === 0) return h`<p class="empty">No searches in this period.</p>`;
  const size = bucketSize(report.per_day.length);
  const unit = size === 1 ? 'day' : size === 7 ? 'week' : '30 days';
  const buckets = bucketsOf(report.per_day, size);
  const top = niceMax(Math.max(...buckets.map((b) => b.searches)));
  const modes = STACK.map(({ mode, label }) => `${report.modes[mode].count} ${label}`).join(', ');
  const legend = join(STACK.map(({ mode, label }) => h`<li><span class="swatch swatch-${mode}" aria-hidden="true"></span>${label}</li>`));
  return h`<figure class="figure">
<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-labelledby="chart-per-day-title chart-per-day-desc">
<title id="chart-per-day-title">Searches per ${unit} by mode</title>
<desc id="chart-per-day-desc">${report.searches} searches from ${report.per_day[0]!.day} to ${report.per_day[report.per_day.length - 1]!.day}: ${modes}. Bars stack hybrid, keyword fallback, then no match; the table after the chart has every ${unit}'s numbers.</desc>
${axes(buckets, top)}
${bars(buckets, top)}
</svg>
<figcaption><ul class="legend">${legend}</ul></figcaption>
</figure>
${perDayTable(buckets, unit)}`;
}

/** A small bar for a number shown beside it (hidden from assistive technology, which reads the number). */
export function meter(value: number, max: number, kind: string): Html {
  const width = max <= 0 ? 0 : fixed((value / max) * 100);
  return h`<svg class="meter" viewBox="0 0 100 10" width="100" height="10" aria-hidden="true" focusable="false"><rect class="track" x="0" y="0" width="100" height="10"></rect><rect class="bar-${kind}" x="0" y="0" width="${width}" height="10"></rect></svg>`;
}
