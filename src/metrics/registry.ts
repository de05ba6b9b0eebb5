// A typed metric creator over one prom-client Registry (Lodestar's RegistryMetricCreator pattern): every
// metric is declared once in metrics.ts with its label names as a type, so call sites cannot misspell a
// label. Gauges can gain scrape-time collectors later (addCollect) from the component that owns the value.

import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { CounterFamily, GaugeFamily, HistogramFamily, registerFamily } from './family.js'

interface MetricConfig<L extends string> {
  name: string
  help: string
  labelNames?: readonly L[]
}

export type Collector<L extends string> = (gauge: Gauge<L>) => void | Promise<void>

export interface CollectableGauge<L extends string = never> extends Gauge<L> {
  /** Runs `collect` before each scrape (after the ones added before it). A failing collector is skipped. */
  addCollect(collect: Collector<L>): void
}

export class MetricsRegistry {
  readonly registry: Registry

  constructor(registry: Registry = new Registry()) {
    this.registry = registry
  }

  counter<L extends string = never>(config: MetricConfig<L>): Counter<L> {
    return new Counter<L>({ ...config, labelNames: config.labelNames ?? [], registers: [this.registry] })
  }

  gauge<L extends string = never>(config: MetricConfig<L>): CollectableGauge<L> {
    const collectors: Array<Collector<L>> = []
    const gauge = new Gauge<L>({
      ...config,
      labelNames: config.labelNames ?? [],
      registers: [this.registry],
      async collect() {
        for (const collect of collectors) {
          try {
            await collect(this)
          } catch {
            // a source that cannot answer now (e.g. shutting down) leaves its last value
          }
        }
      },
    }) as CollectableGauge<L>
    gauge.addCollect = (collect) => {
      collectors.push(collect)
    }
    return gauge
  }

  histogram<L extends string = never>(config: MetricConfig<L> & { buckets: number[] }): Histogram<L> {
    return new Histogram<L>({ ...config, labelNames: config.labelNames ?? [], registers: [this.registry] })
  }

  counterFamily<L extends string = never>(config: MetricConfig<L>): CounterFamily<L> {
    return registerFamily(this.registry, new CounterFamily<L>(config.name, config.help, config.labelNames ?? []))
  }

  gaugeFamily<L extends string = never>(config: MetricConfig<L>): GaugeFamily<L> {
    return registerFamily(this.registry, new GaugeFamily<L>(config.name, config.help, config.labelNames ?? []))
  }

  histogramFamily<L extends string = never>(config: MetricConfig<L> & { buckets: readonly number[] }): HistogramFamily<L> {
    return registerFamily(
      this.registry,
      new HistogramFamily<L>(config.name, config.help, config.labelNames ?? [], config.buckets),
    )
  }

  /** A counter whose total someone else keeps (read at scrape time, e.g. a component's own tally). */
  externalCounter(config: { name: string; help: string; read: () => number }): void {
    const { name, help, read } = config
    this.registry.registerMetric({
      name,
      help,
      type: 'counter',
      aggregator: 'sum',
      get: () => ({ name, help, type: 'counter', values: [{ labels: {}, value: read() }], aggregator: 'sum' }),
      reset() {},
    } as never)
  }

  contentType(): string {
    return this.registry.contentType
  }

  text(): Promise<string> {
    return this.registry.metrics()
  }
}
