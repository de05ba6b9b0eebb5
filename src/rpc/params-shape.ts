// A cheap structural bound on call params, checked before any handler runs: nesting depth, items per array
// or object, and string length. JSON.parse accepts anything the transport let through (5 MiB over HTTP,
// 32 MiB over WS); these bounds keep a hostile shape from reaching handler code (deep recursion, huge
// fan-out) while staying far above anything a real call carries.

export interface ParamsShapeLimits {
  /** Deepest nesting of arrays/objects; the params array itself is level 1. */
  paramsMaxDepth: number
  /** Most items in one array, or members in one object. */
  paramsMaxItems: number
  /** Longest string, in characters (a hex string holds half as many bytes). */
  paramsMaxStringLength: number
}

/** The first limit the params break, as an error message; undefined when they fit. */
export function paramsShapeProblem(params: readonly unknown[], limits: ParamsShapeLimits): string | undefined {
  return check(params, 1, limits)
}

function check(value: unknown, depth: number, limits: ParamsShapeLimits): string | undefined {
  if (typeof value === 'string') {
    return value.length > limits.paramsMaxStringLength
      ? `invalid params: string longer than ${limits.paramsMaxStringLength} characters`
      : undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  if (depth > limits.paramsMaxDepth) return `invalid params: nested deeper than ${limits.paramsMaxDepth} levels`
  if (Array.isArray(value)) {
    if (value.length > limits.paramsMaxItems) return `invalid params: array longer than ${limits.paramsMaxItems} items`
    for (let i = 0; i < value.length; i++) {
      const problem = check(value[i], depth + 1, limits)
      if (problem !== undefined) return problem
    }
    return undefined
  }
  let members = 0
  for (const key in value) {
    if (++members > limits.paramsMaxItems) return `invalid params: object with more than ${limits.paramsMaxItems} members`
    if (key.length > limits.paramsMaxStringLength) {
      return `invalid params: string longer than ${limits.paramsMaxStringLength} characters`
    }
    const problem = check((value as Record<string, unknown>)[key], depth + 1, limits)
    if (problem !== undefined) return problem
  }
  return undefined
}
