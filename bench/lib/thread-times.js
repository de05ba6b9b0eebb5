// CPU time of each thread of a process, from /proc/PID/task/TID/stat (user + system), in milliseconds.

import { readdirSync, readFileSync } from 'node:fs'

const CLK_TCK = 100

/** Map of thread id to { name, ms } for every thread of `pid` alive now. */
export function threadTimes(pid) {
  const out = new Map()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
      out.set(tid, { name, ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK })
    } catch {
      // the thread ended meanwhile
    }
  }
  return out
}
