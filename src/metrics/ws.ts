// WebSocket metrics. Connection and subscription counts are read at scrape time from the server and the
// subscription manager (bind); notifications are counted as they are sent (notified), by subscription kind.

import type { CounterChild } from './family.js'
import type { CollectableGauge, MetricsRegistry } from './registry.js'

export const SUBSCRIPTION_KINDS = ['newHeads', 'logs', 'newPendingTransactions', 'syncing'] as const
export type SubscriptionKind = (typeof SUBSCRIPTION_KINDS)[number]

/** Structurally RpcServer.wsStats() and SubscriptionManager.stats(). */
export interface WsSources {
  transport(): { open: number; closedTooSlow: number; refusedPerIp: number; refusedFull: number }
  subscriptions(): Record<SubscriptionKind, number>
}

export class WsMetrics {
  readonly connections: CollectableGauge
  readonly subscriptions: CollectableGauge<'kind'>
  readonly notifications
  private readonly notificationsByKind = new Map<string, CounterChild>()
  private bound = false

  constructor(private readonly register: MetricsRegistry) {
    this.connections = register.gauge({ name: 'keel_ws_connections', help: 'Open WebSocket connections' })
    this.subscriptions = register.gauge<'kind'>({
      name: 'keel_ws_subscriptions',
      help: 'Active eth_subscribe subscriptions, by kind',
      labelNames: ['kind'],
    })
    this.notifications = register.counterFamily<'kind'>({
      name: 'keel_ws_notifications_sent_total',
      help: 'eth_subscription notifications sent, by subscription kind',
      labelNames: ['kind'],
    })
  }

  bind(sources: WsSources): void {
    if (this.bound) return
    this.bound = true
    this.connections.addCollect((g) => g.set(sources.transport().open))
    this.subscriptions.addCollect((g) => {
      const stats = sources.subscriptions()
      for (const kind of SUBSCRIPTION_KINDS) g.set({ kind }, stats[kind])
    })
    this.register.externalCounter({
      name: 'keel_ws_slow_consumers_closed_total',
      help: 'WebSocket connections closed because their unsent data passed the send buffer limit',
      read: () => sources.transport().closedTooSlow,
    })
    this.register.externalCounter({
      name: 'keel_ws_connections_refused_total',
      help: 'WebSocket upgrades refused because the client address had used its connection quota',
      read: () => sources.transport().refusedPerIp,
    })
    this.register.externalCounter({
      name: 'keel_ws_connections_refused_full_total',
      help: 'WebSocket upgrades refused (HTTP 503) because --ws-max-connections connections were open',
      read: () => sources.transport().refusedFull,
    })
  }

  /** `count` notifications of one subscription kind were queued on sockets. */
  notified(kind: string, count = 1): void {
    let counter = this.notificationsByKind.get(kind)
    if (counter === undefined) {
      const known = (SUBSCRIPTION_KINDS as readonly string[]).includes(kind)
      counter = this.notifications.child({ kind: known ? kind : 'other' })
      if (known) this.notificationsByKind.set(kind, counter)
    }
    counter.inc(count)
  }
}
