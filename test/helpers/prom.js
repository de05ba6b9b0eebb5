// A strict parser for the Prometheus text exposition format (version 0.0.4), as Prometheus' own
// expfmt/textparse read it, plus the consistency rules a scrape must obey:
//  - metric and label names match [a-zA-Z_:][a-zA-Z0-9_:]* / [a-zA-Z_][a-zA-Z0-9_]*;
//  - label values are double-quoted with only \\, \" and \n escapes; values are Go floats (NaN, +Inf, -Inf);
//  - at most one HELP and one TYPE per family, TYPE before its samples, a family's samples contiguous;
//  - sample names fit the family type (histogram: _bucket/_sum/_count; summary: name/_sum/_count);
//  - no duplicate series; counters are >= 0;
//  - histograms: every series has an le="+Inf" bucket equal to its _count, cumulative buckets, a _sum.
// Throws an Error naming the line on the first violation.

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])

/**
 * @typedef {{ name: string, labels: Record<string, string>, value: number, timestamp?: number }} Sample
 * @typedef {{ name: string, help?: string, type: string, samples: Sample[] }} Family
 */

/** @returns {Map<string, Family>} families by name */
export function parsePrometheusText(text) {
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('exposition does not end with a newline')
  /** @type {Map<string, Family>} */
  const families = new Map()
  const finished = new Set()
  let current
  const lines = text.split('\n')
  lines.pop()
  const familyOf = (name, lineNo) => {
    let family = families.get(name)
    if (family === undefined) {
      family = { name, type: 'untyped', samples: [], typed: false, helped: false }
      families.set(name, family)
    }
    if (current !== family) {
      if (finished.has(name)) throw new Error(`line ${lineNo}: metric family ${name} is not contiguous`)
      if (current !== undefined) finished.add(current.name)
      current = family
    }
    return family
  }
  lines.forEach((line, i) => {
    const lineNo = i + 1
    if (line.trim() === '') return
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line)
      if (m === null) return // any other comment
      const [, keyword, name, rest = ''] = m
      if (!fullMatch(METRIC_NAME, name)) throw new Error(`line ${lineNo}: bad metric name ${JSON.stringify(name)}`)
      const family = familyOf(name, lineNo)
      if (keyword === 'HELP') {
        if (family.helped) throw new Error(`line ${lineNo}: second HELP for ${name}`)
        family.helped = true
        family.help = unescapeHelp(rest, lineNo)
      } else {
        if (family.typed) throw new Error(`line ${lineNo}: second TYPE for ${name}`)
        if (family.samples.length > 0) throw new Error(`line ${lineNo}: TYPE for ${name} after its samples`)
        const type = rest.trim()
        if (!TYPES.has(type)) throw new Error(`line ${lineNo}: unknown type ${JSON.stringify(type)}`)
        family.typed = true
        family.type = type
      }
      return
    }
    const sample = parseSample(line, lineNo)
    const family = familyOf(familyNameOf(sample.name, families, current), lineNo)
    checkSampleName(family, sample, lineNo)
    family.samples.push(sample)
  })
  for (const family of families.values()) {
    checkFamily(family)
    delete family.typed
    delete family.helped
  }
  return families
}

/** The family a sample belongs to: histogram/summary suffixes attach to the current or a declared family. */
function familyNameOf(sampleName, families, current) {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue
    const base = sampleName.slice(0, -suffix.length)
    const family = families.get(base)
    if (family !== undefined && (family.type === 'histogram' || family.type === 'summary')) return base
  }
  if (current !== undefined && current.name === sampleName) return sampleName
  return sampleName
}

function checkSampleName(family, sample, lineNo) {
  const { name, type } = family
  const allowed =
    type === 'histogram'
      ? [`${name}_bucket`, `${name}_sum`, `${name}_count`]
      : type === 'summary'
        ? [name, `${name}_sum`, `${name}_count`]
        : [name]
  if (!allowed.includes(sample.name)) throw new Error(`line ${lineNo}: sample ${sample.name} does not fit ${type} ${name}`)
  if (type === 'histogram' && sample.name === `${name}_bucket` && sample.labels.le === undefined) {
    throw new Error(`line ${lineNo}: histogram bucket without le`)
  }
  if (type === 'summary' && sample.name === name && sample.labels.quantile === undefined) {
    throw new Error(`line ${lineNo}: summary sample without quantile`)
  }
  if (type === 'counter' && !(sample.value >= 0)) throw new Error(`line ${lineNo}: counter ${name} is ${sample.value}`)
}

function checkFamily(family) {
  const seen = new Set()
  for (const s of family.samples) {
    const key = s.name + seriesKey(s.labels)
    if (seen.has(key)) throw new Error(`duplicate series ${key}`)
    seen.add(key)
  }
  if (family.type !== 'histogram') return
  /** @type {Map<string, {buckets: Array<[number, number]>, sum?: number, count?: number}>} */
  const series = new Map()
  const of = (labels) => {
    const key = seriesKey(labels, 'le')
    let s = series.get(key)
    if (s === undefined) series.set(key, (s = { key, buckets: [] }))
    return s
  }
  for (const sample of family.samples) {
    const s = of(sample.labels)
    if (sample.name.endsWith('_bucket')) s.buckets.push([parseFloatStrict(sample.labels.le, 'le'), sample.value])
    else if (sample.name.endsWith('_sum')) s.sum = sample.value
    else s.count = sample.value
  }
  for (const s of series.values()) {
    const where = `${family.name}${s.key}`
    if (s.count === undefined || s.sum === undefined) throw new Error(`histogram ${where} lacks _sum or _count`)
    s.buckets.sort((a, b) => a[0] - b[0])
    const inf = s.buckets.at(-1)
    if (inf === undefined || inf[0] !== Infinity) throw new Error(`histogram ${where} has no le="+Inf" bucket`)
    if (inf[1] !== s.count) throw new Error(`histogram ${where}: +Inf bucket ${inf[1]} != count ${s.count}`)
    for (let i = 1; i < s.buckets.length; i++) {
      if (s.buckets[i][1] < s.buckets[i - 1][1]) throw new Error(`histogram ${where}: buckets are not cumulative`)
    }
  }
}

function parseSample(line, lineNo) {
  const fail = (why) => {
    throw new Error(`line ${lineNo}: ${why}: ${line}`)
  }
  const nameMatch = METRIC_NAME.exec(line)
  if (nameMatch === null) fail('bad metric name')
  const name = nameMatch[0]
  let i = name.length
  /** @type {Record<string, string>} */
  const labels = {}
  if (line[i] === '{') {
    i++
    for (;;) {
      while (line[i] === ' ') i++
      if (line[i] === '}') {
        i++
        break
      }
      const labelMatch = LABEL_NAME.exec(line.slice(i))
      if (labelMatch === null) fail('bad label name')
      const labelName = labelMatch[0]
      i += labelName.length
      while (line[i] === ' ') i++
      if (line[i] !== '=') fail('expected =')
      i++
      while (line[i] === ' ') i++
      if (line[i] !== '"') fail('expected "')
      i++
      let value = ''
      for (;;) {
        const c = line[i]
        if (c === undefined) fail('unterminated label value')
        if (c === '"') break
        if (c === '\\') {
          const e = line[i + 1]
          if (e === '\\') value += '\\'
          else if (e === '"') value += '"'
          else if (e === 'n') value += '\n'
          else fail(`bad escape \\${e}`)
          i += 2
          continue
        }
        value += c
        i++
      }
      i++
      if (Object.hasOwn(labels, labelName)) fail(`label ${labelName} twice`)
      labels[labelName] = value
      while (line[i] === ' ') i++
      if (line[i] === ',') {
        i++
        continue
      }
      if (line[i] === '}') {
        i++
        break
      }
      fail('expected , or }')
    }
  }
  if (line[i] !== ' ' && line[i] !== '\t') fail('expected a space before the value')
  const rest = line.slice(i).trim().split(/[ \t]+/)
  if (rest.length < 1 || rest.length > 2 || rest[0] === '') fail('expected a value and an optional timestamp')
  const value = parseFloatStrict(rest[0], `line ${lineNo} value`)
  const sample = { name, labels, value }
  if (rest.length === 2) {
    if (!/^-?\d+$/.test(rest[1])) fail('bad timestamp')
    sample.timestamp = Number(rest[1])
  }
  return sample
}

/** Go's strconv.ParseFloat as the Prometheus parser uses it (case-insensitive NaN/Inf). */
function parseFloatStrict(text, what) {
  const lower = text.toLowerCase()
  if (lower === 'nan') return NaN
  if (lower === '+inf' || lower === 'inf') return Infinity
  if (lower === '-inf') return -Infinity
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new Error(`${what}: not a float: ${JSON.stringify(text)}`)
  return Number(text)
}

function unescapeHelp(text, lineNo) {
  return text.replace(/\\(.?)/g, (_, e) => {
    if (e === '\\') return '\\'
    if (e === 'n') return '\n'
    throw new Error(`line ${lineNo}: bad escape in HELP`)
  })
}

const fullMatch = (re, text) => re.exec(text)?.[0] === text

function seriesKey(labels, without) {
  const names = Object.keys(labels)
    .filter((n) => n !== without)
    .sort()
  return '{' + names.map((n) => `${n}=${JSON.stringify(labels[n])}`).join(',') + '}'
}

// ---- lookups for tests ----

/** Every sample of `sampleName` whose labels include `match`. */
export function samples(families, sampleName, match = {}) {
  const out = []
  for (const family of families.values()) {
    for (const s of family.samples) {
      if (s.name !== sampleName) continue
      if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) out.push(s)
    }
  }
  return out
}

/** The sum of the matching samples' values (0 when none). */
export function total(families, sampleName, match = {}) {
  return samples(families, sampleName, match).reduce((sum, s) => sum + s.value, 0)
}

/** The one matching sample's value; throws unless exactly one matches. */
export function value(families, sampleName, match = {}) {
  const found = samples(families, sampleName, match)
  if (found.length !== 1) throw new Error(`${found.length} samples of ${sampleName} match ${JSON.stringify(match)}`)
  return found[0].value
}

/** Scrapes and parses; also checks the content type. */
export async function scrape(metricsUrl) {
  const res = await fetch(metricsUrl)
  if (res.status !== 200) throw new Error(`scrape of ${metricsUrl} answered ${res.status}`)
  const type = res.headers.get('content-type') ?? ''
  if (!type.startsWith('text/plain') || !type.includes('version=0.0.4')) throw new Error(`unexpected content type ${type}`)
  return parsePrometheusText(await res.text())
}
