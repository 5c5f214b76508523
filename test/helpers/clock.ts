import type { Clock } from '../../src/core/clock.js';

/** A clock tests can move. */
export class TestClock implements Clock {
  private ms: number;

  constructor(start: string | number = Date.now()) {
    this.ms = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): Date {
    return new Date(this.ms);
  }

  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }

  set(iso: string): void {
    this.ms = Date.parse(iso);
  }
}
