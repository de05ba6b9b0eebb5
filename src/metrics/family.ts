// Hot-path metric families. prom-client hashes and validates the label set on every inc()/observe(); these
// families resolve a child once (per label combination, cached by the caller) and then only add to plain
// numbers. They plug into a prom-client Registry as custom metrics (name, help, type, get()), so the
// exposition format is prom-client's own.

import type { Registry } from 'prom-client'

type LabelValues<L extends string> = Record<L, string>

interface MetricValue {
  labels: Record<string, string>
  value: number
  metricName?: string
}

interface MetricSnapshot {
  name: string
  help: string
  type: 'counter' | 'gauge' | 'histogram'
  values: MetricValue[]
  aggregator: 'sum'
}

export interface CounterChild {
  inc(amount?: number): void
}

export interface GaugeChild extends CounterChild {
  dec(amount?: number): void
  set(value: number): void
}

export interface HistogramChild {
  observe(value: number): void
}

class ValueChild implements GaugeChild {
  value = 0
  constructor(readonly labels: Record<string, string>) {}
  inc(amount = 1): void {
    this.value += amount
  }
  dec(amount = 1): void {
    this.value -= amount
  }
  set(value: number): void {
    this.value = value
  }
}

class BucketChild implements HistogramChild {
  /** Per-bucket counts, not cumulative: observe() touches one slot; get() accumulates. */
  readonly counts: Float64Array
  sum = 0
  count = 0
  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: Float64Array,
  ) {
    this.counts = new Float64Array(bounds.length)
  }
  observe(value: number): void {
    const bounds = this.bounds
    const n = bounds.length
    let i = 0
    while (i < n && value > bounds[i]!) i++
    if (i < n) this.counts[i]!++
    this.sum += value
    this.count++
  }
}

abstract class Family<L extends string, C extends { labels: Record<string, string> }> {
  readonly aggregator = 'sum' as const
  protected readonly children = new Map<string, C>()

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly L[],
  ) {}

  /** The child for these label values; callers on hot paths keep the returned object. */
  protected childOf(labels: LabelValues<L>): C {
    let key = ''
    for (const name of this.labelNames) key += labels[name] + '\u0000'
    let child = this.children.get(key)
    if (child === undefined) {
      const own: Record<string, string> = {}
      for (const name of this.labelNames) own[name] = labels[name]
      child = this.create(own)
      this.children.set(key, child)
    }
    return child
  }

  reset(): void {
    this.children.clear()
  }

  protected abstract create(labels: Record<string, string>): C
}

export class CounterFamily<L extends string = never> extends Family<L, ValueChild> {
  readonly type: 'counter' | 'gauge' = 'counter'

  child(labels: LabelValues<L>): CounterChild & { readonly value: number } {
    return this.childOf(labels)
  }

  protected create(labels: Record<string, string>): ValueChild {
    return new ValueChild(labels)
  }

  get(): MetricSnapshot {
    const values: MetricValue[] = []
    for (const child of this.children.values()) values.push({ labels: child.labels, value: child.value })
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }
}

export class GaugeFamily<L extends string = never> extends CounterFamily<L> {
  override readonly type = 'gauge' as const

  override child(labels: LabelValues<L>): GaugeChild & { readonly value: number } {
    return this.childOf(labels)
  }
}

export class HistogramFamily<L extends string = never> extends Family<L, BucketChild> {
  readonly type = 'histogram' as const
  private readonly bounds: Float64Array
  private readonly boundLabels: string[]

  constructor(name: string, help: string, labelNames: readonly L[], buckets: readonly number[]) {
    super(name, help, labelNames)
    const sorted = [...buckets].sort((a, b) => a - b)
    this.bounds = Float64Array.from(sorted)
    this.boundLabels = sorted.map((b) => String(b))
  }

  child(labels: LabelValues<L>): HistogramChild & { readonly count: number; readonly sum: number } {
    return this.childOf(labels)
  }

  protected create(labels: Record<string, string>): BucketChild {
    return new BucketChild(labels, this.bounds)
  }

  get(): MetricSnapshot {
    const values: MetricValue[] = []
    const bucketName = this.name + '_bucket'
    for (const child of this.children.values()) {
      let cumulative = 0
      for (let i = 0; i < this.boundLabels.length; i++) {
        cumulative += child.counts[i]!
        values.push({ labels: { ...child.labels, le: this.boundLabels[i]! }, value: cumulative, metricName: bucketName })
      }
      values.push({ labels: { ...child.labels, le: '+Inf' }, value: child.count, metricName: bucketName })
      values.push({ labels: child.labels, value: child.sum, metricName: this.name + '_sum' })
      values.push({ labels: child.labels, value: child.count, metricName: this.name + '_count' })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }
}

/** Registers a family with a prom-client registry (which only needs name, help, type and get()). */
export function registerFamily<F extends CounterFamily<string> | HistogramFamily<string>>(registry: Registry, family: F): F {
  registry.registerMetric(family as never)
  return family
}
