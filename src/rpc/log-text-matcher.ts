// eth_getLogs criteria matched against the logs' JSON text (src/json/log.ts blockLogTexts): a block's logs
// are encoded once, and a query over thousands of them compares strings in place, without decoding the
// block's receipts or making an object per log. Same rules as chain/logs.ts LogMatcher (the blocks to
// look at still come from its blooms or the address/topic index).

import type { LogCriteria } from '../chain/logs.js'
import { addressOfText, textHasAddress, textHasTopic, topicCountOfText, topicOfText } from '../json/log.js'

/** Up to this many alternatives are compared in place one by one; more are looked up in a set. */
const COMPARE_IN_PLACE = 4

/** One position's alternatives (an address list is position -1), or null for any. */
type Alternatives = { list: readonly string[]; set: ReadonlySet<string> | null } | null

const alternatives = (list: readonly string[] | null): Alternatives =>
  // an empty list matches any, as geth
  list === null || list.length === 0 ? null : { list, set: list.length > COMPARE_IN_PLACE ? new Set(list) : null }

export class LogTextMatcher {
  private readonly addresses: Alternatives
  private readonly topics: Alternatives[]

  constructor(criteria: LogCriteria) {
    this.addresses = alternatives(criteria.addresses)
    this.topics = criteria.topics.map(alternatives)
  }

  matches(text: string): boolean {
    const addresses = this.addresses
    if (addresses !== null) {
      if (addresses.set !== null) {
        if (!addresses.set.has(addressOfText(text))) return false
      } else {
        let found = false
        for (let i = 0; i < addresses.list.length && !found; i++) found = textHasAddress(text, addresses.list[i]!)
        if (!found) return false
      }
    }
    const topics = this.topics
    if (topics.length === 0) return true
    // as geth: a filter naming more positions than the log has topics never matches it, wildcards or not
    if (topics.length > topicCountOfText(text)) return false
    for (let position = 0; position < topics.length; position++) {
      const alts = topics[position]!
      if (alts === null) continue
      if (alts.set !== null) {
        if (!alts.set.has(topicOfText(text, position))) return false
        continue
      }
      let found = false
      for (let i = 0; i < alts.list.length && !found; i++) found = textHasTopic(text, position, alts.list[i]!)
      if (!found) return false
    }
    return true
  }

  /** Appends the texts in `texts` that match to `out`. */
  collect(texts: readonly string[], out: string[]): void {
    for (let i = 0; i < texts.length; i++) if (this.matches(texts[i]!)) out.push(texts[i]!)
  }
}
