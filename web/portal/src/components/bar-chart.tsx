import { count } from '../format.js';

export interface Bar {
  label: string;
  value: number;
  /** Drawn on top of value in the warning colour (429s). */
  extra: number;
}

const WIDTH = 760;
const HEIGHT = 220;
const PAD = { left: 48, right: 8, top: 12, bottom: 28 };

/** A round axis maximum: 1, 2 or 5 times a power of ten. */
function niceMax(n: number): number {
  if (n <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 5, 10]) if (step * power >= n) return step * power;
  return 10 * power;
}

/**
 * Requests per day as stacked bars drawn in SVG (no chart library): allowed requests, with refused
 * ones (429) on top. Screen readers get the summary and a table of the same numbers.
 */
export function BarChart(props: { title: string; bars: Bar[]; valueLabel: string; extraLabel: string }) {
  const { bars } = props;
  const max = niceMax(Math.max(0, ...bars.map((b) => b.value + b.extra)));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, bars.length);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const total = bars.reduce((t, b) => t + b.value, 0);
  const extra = bars.reduce((t, b) => t + b.extra, 0);
  const summary = `${props.title}: ${count(total)} ${props.valueLabel} and ${count(extra)} ${props.extraLabel} over ${bars.length} days.`;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={summary}
        data-total={total}
        data-extra={extra}
        preserveAspectRatio="xMidYMid meet"
      >
        {[0, 0.5, 1].map((f) => (
          <g key={f} class="axis">
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(max * f)} y2={y(max * f)} />
            <text x={PAD.left - 6} y={y(max * f) + 4} text-anchor="end">
              {count(Math.round(max * f))}
            </text>
          </g>
        ))}
        {bars.map((b, i) => {
          const x = PAD.left + i * slot + (slot - barW) / 2;
          return (
            <g key={b.label} class="day" data-day={b.label} data-value={b.value}>
              <title>
                {b.label}: {count(b.value)} {props.valueLabel}, {count(b.extra)} {props.extraLabel}
              </title>
              {b.value > 0 && (
                <rect class="bar" x={x} y={y(b.value)} width={barW} height={y(0) - y(b.value)} />
              )}
              {b.extra > 0 && (
                <rect
                  class="bar extra"
                  x={x}
                  y={y(b.value + b.extra)}
                  width={barW}
                  height={y(b.value) - y(b.value + b.extra)}
                />
              )}
              {(i % 5 === 0 || i === bars.length - 1) && (
                <text class="axis" x={x + barW / 2} y={HEIGHT - 8} text-anchor="middle">
                  {b.label.slice(5)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        {summary}{' '}
        <span class="legend">
          <span class="swatch bar" aria-hidden="true" /> {props.valueLabel}{' '}
          <span class="swatch extra" aria-hidden="true" /> {props.extraLabel}
        </span>
      </figcaption>
    </figure>
  );
}
