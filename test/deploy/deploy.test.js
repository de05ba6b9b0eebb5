// The deployment recipes, checked by what can run here (Docker and Kubernetes cannot): the Dockerfile's
// inputs exist and its command starts a node that passes its own HEALTHCHECK; the compose file, the
// Kubernetes manifests and the HAProxy config are well formed and agree with Keel's options and ports.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { parseAllDocuments } from 'yaml'
import { OPTIONS_BY_ENV } from '../../dist/config/options.js'
import { repoRoot } from '../helpers/keel-cli.js'
import { waitForLine } from '../helpers/node.js'

const deploy = join(repoRoot, 'deploy')
const read = (...parts) => readFileSync(join(deploy, ...parts), 'utf8')

/** Dockerfile instructions, continuation lines joined, comments dropped. */
function dockerInstructions(text) {
  const joined = text.replace(/\\\r?\n/g, ' ')
  return joined
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [, op, rest] = /^(\S+)\s+(.*)$/.exec(l)
      return { op: op.toUpperCase(), args: rest }
    })
}

const dockerfile = dockerInstructions(read('docker', 'Dockerfile'))
const stages = []
for (const ins of dockerfile) {
  if (ins.op === 'FROM') stages.push({ from: ins.args, body: [] })
  else stages.at(-1).body.push(ins)
}
const runtime = stages.at(-1)
const json = (ins) => JSON.parse(ins.args)
const envOf = (stage) => {
  const env = {}
  for (const ins of stage.body.filter((i) => i.op === 'ENV')) {
    for (const [, k, v] of ins.args.matchAll(/(\w+)=(\S+)/g)) env[k] = v
  }
  return env
}

test('Dockerfile: multi-stage, node 20 slim runtime, non-root, /data volume, HEALTHCHECK on /health', () => {
  assert.equal(stages.length, 2)
  assert.match(stages[0].from, /^node:20-bookworm AS build$/)
  assert.match(runtime.from, /^node:20-bookworm-slim AS runtime$/)
  assert.ok(stages[0].body.some((i) => i.op === 'RUN' && /npm ci\b/.test(i.args)))
  assert.ok(stages[0].body.some((i) => i.op === 'RUN' && /tsc -p tsconfig\.json/.test(i.args)))
  const user = runtime.body.filter((i) => i.op === 'USER').at(-1)
  assert.ok(user && !/^(root|0)(:|$)/.test(user.args), 'the runtime runs as a non-root user')
  assert.deepEqual(json(runtime.body.find((i) => i.op === 'VOLUME')), ['/data'])
  assert.equal(envOf(runtime).KEEL_DATA_DIR, '/data')
  const health = runtime.body.find((i) => i.op === 'HEALTHCHECK')
  assert.match(health.args, /http:\/\/127\.0\.0\.1:8545\/health/)
  for (const name of Object.keys(envOf(runtime)).filter((n) => n.startsWith('KEEL_'))) {
    assert.ok(OPTIONS_BY_ENV.has(name), `${name} is a Keel option`)
  }
})

test('Dockerfile: every file copied from the build context exists and is not excluded by its .dockerignore', () => {
  const ignore = read('docker', 'Dockerfile.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
  const reincluded = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/\*\*$/, ''))
  let copies = 0
  for (const stage of stages) {
    for (const ins of stage.body.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))) {
      const parts = ins.args.split(/\s+/)
      for (const source of parts.slice(0, -1)) {
        copies++
        assert.ok(existsSync(join(repoRoot, source)), `COPY source ${source} exists`)
        assert.ok(reincluded.includes(source), `${source} is let through the .dockerignore`)
      }
    }
  }
  assert.ok(copies >= 5)
  // what the runtime stage copies from the build stage is what `npx tsc` and `npm ci` produce here
  for (const ins of runtime.body.filter((i) => i.op === 'COPY' && i.args.startsWith('--from=build'))) {
    for (const source of ins.args.split(/\s+/).slice(1, -1)) {
      assert.ok(existsSync(join(repoRoot, source.replace(/^\/app\//, ''))), `${source} is produced by the build stage`)
    }
  }
})

test('Dockerfile: ENTRYPOINT + CMD start a node that passes the image HEALTHCHECK', async (t) => {
  const entrypoint = json(runtime.body.find((i) => i.op === 'ENTRYPOINT'))
  const cmd = json(runtime.body.find((i) => i.op === 'CMD'))
  assert.deepEqual(entrypoint, ['node', '/app/bin/keel.js'])
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-docker-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  // the image's environment, with loopback, free ports and a temp folder instead of 0.0.0.0:8545 and /data
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KEEL_')))
  const env = { ...clean, ...envOf(runtime), KEEL_DATA_DIR: dataDir, KEEL_HOST: '127.0.0.1', KEEL_PORT: '0', KEEL_METRICS_PORT: '0' }
  const child = spawn(process.execPath, [entrypoint[1].replace('/app/', `${repoRoot}/`), ...cmd], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => child.kill('SIGKILL'))
  const port = Number((await waitForLine(child, /listening on http:\/\/127\.0\.0\.1:(\d+)/))[1])
  const health = runtime.body.find((i) => i.op === 'HEALTHCHECK')
  const probe = JSON.parse(/CMD\s+(\[.*\])\s*$/.exec(health.args)[1])
  const script = probe[2].replace('127.0.0.1:8545', `127.0.0.1:${port}`)
  execFileSync(process.execPath, ['-e', script], { timeout: 10_000 })
  assert.ok(existsSync(join(dataDir, 'operator.key')), 'the default genesis wrote the operator key into the volume')
  child.kill('SIGTERM')
})

test('hadolint accepts the Dockerfile (when hadolint is installed)', (t) => {
  let hadolint
  try {
    hadolint = execFileSync('sh', ['-c', 'command -v hadolint'], { encoding: 'utf8' }).trim()
  } catch {
    t.skip('hadolint is not installed')
    return
  }
  execFileSync(hadolint, ['--failure-threshold', 'warning', join(deploy, 'docker', 'Dockerfile')], { stdio: 'inherit' })
})

test('compose: Keel, Prometheus and Grafana wired to the shared Prometheus config and dashboard', () => {
  const [doc] = parseAllDocuments(read('compose', 'docker-compose.yml'))
  assert.deepEqual(doc.errors, [])
  const compose = doc.toJS()
  const { keel, prometheus, grafana } = compose.services
  assert.equal(keel.build.dockerfile, 'deploy/docker/Dockerfile')
  assert.ok(existsSync(join(deploy, 'compose', keel.build.context, keel.build.dockerfile)))
  assert.equal(keel.command[0], 'start')
  for (const name of Object.keys(keel.environment)) assert.ok(OPTIONS_BY_ENV.has(name), `${name} is a Keel option`)
  assert.ok(keel.volumes.includes('keel-data:/data'))
  assert.equal(prometheus.network_mode, 'service:keel', 'Prometheus reaches the metrics listener on 127.0.0.1:9545')
  assert.match(read('prometheus', 'prometheus.yml'), /127\.0\.0\.1:9545/)
  assert.equal(keel.environment.KEEL_METRICS_PORT, '9545')
  // every bind-mounted file exists
  for (const service of [keel, prometheus, grafana]) {
    for (const volume of service.volumes ?? []) {
      const source = volume.split(':')[0]
      if (source.startsWith('.')) assert.ok(existsSync(join(deploy, 'compose', source)), `${source} exists`)
    }
  }
  assert.ok(prometheus.volumes.some((v) => v.startsWith('../prometheus/prometheus.yml:/etc/prometheus/prometheus.yml')))
  assert.ok(grafana.volumes.some((v) => v.startsWith('../grafana/keel-dashboard.json:')))
  const datasource = parseAllDocuments(read('compose', 'grafana', 'datasource.yml'))[0].toJS()
  assert.equal(datasource.datasources[0].url, 'http://keel:9090')
  const dashboards = parseAllDocuments(read('compose', 'grafana', 'dashboards.yml'))[0].toJS()
  const mounted = grafana.volumes.find((v) => v.includes('keel-dashboard.json')).split(':')[1]
  assert.equal(dirname(mounted), dashboards.providers[0].options.path)
  JSON.parse(read('grafana', 'keel-dashboard.json'))
})

/** Every Kubernetes document in deploy/k8s. */
function k8sDocuments() {
  const docs = []
  for (const file of readdirSync(join(deploy, 'k8s')).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(read('k8s', file))) {
      assert.deepEqual(doc.errors, [], file)
      const value = doc.toJS()
      if (value !== null) docs.push({ file, value })
    }
  }
  return docs
}

test('Kubernetes manifests: StatefulSet with a volume, probes on /health and /ready, Services, PDB, ServiceMonitor', () => {
  const docs = k8sDocuments().map((d) => d.value)
  const byKind = (kind) => docs.filter((d) => d.kind === kind)
  for (const d of docs) {
    assert.equal(typeof d.apiVersion, 'string')
    assert.match(d.metadata?.name ?? '', /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, `${d.kind} has a DNS-1123 name`)
  }
  const [sts] = byKind('StatefulSet')
  assert.equal(sts.apiVersion, 'apps/v1')
  assert.equal(sts.spec.replicas, 1, 'one producer')
  assert.deepEqual(sts.spec.selector.matchLabels, Object.fromEntries(Object.entries(sts.spec.template.metadata.labels).filter(([k]) => k in sts.spec.selector.matchLabels)))
  const pod = sts.spec.template.spec
  const [container] = pod.containers
  assert.equal(pod.securityContext.runAsNonRoot, true)
  assert.equal(container.args[0], 'start')
  assert.equal(container.livenessProbe.httpGet.path, '/health')
  assert.equal(container.readinessProbe.httpGet.path, '/ready')
  const portNames = container.ports.map((p) => p.name)
  for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) assert.ok(portNames.includes(probe.httpGet.port))
  assert.ok(container.resources.requests.cpu && container.resources.requests.memory)
  const env = Object.fromEntries(container.env.map((e) => [e.name, e.value]))
  for (const name of Object.keys(env)) assert.ok(OPTIONS_BY_ENV.has(name), `${name} is a Keel option`)
  assert.equal(env.KEEL_DATA_DIR, '/data')
  const claim = sts.spec.volumeClaimTemplates[0]
  assert.ok(container.volumeMounts.some((m) => m.name === claim.metadata.name && m.mountPath === '/data'))
  assert.ok(claim.spec.resources.requests.storage)
  assert.ok(pod.terminationGracePeriodSeconds > 30)

  const services = byKind('Service')
  assert.ok(services.some((s) => s.metadata.name === sts.spec.serviceName && s.spec.clusterIP === 'None'), 'the governing headless Service')
  for (const s of services) {
    for (const p of s.spec.ports) assert.ok(portNames.includes(p.targetPort), `${s.metadata.name} targets a container port`)
    assert.ok(Object.entries(s.spec.selector).every(([k, v]) => sts.spec.template.metadata.labels[k] === v), `${s.metadata.name} selects the pod`)
  }
  const [pdb] = byKind('PodDisruptionBudget')
  assert.equal(pdb.apiVersion, 'policy/v1')
  assert.deepEqual(pdb.spec.selector.matchLabels, sts.spec.selector.matchLabels)
  const [monitor] = byKind('ServiceMonitor')
  assert.equal(monitor.apiVersion, 'monitoring.coreos.com/v1')
  const metricsService = services.find((s) => Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels[k] === v))
  assert.ok(metricsService, 'the ServiceMonitor selects a Service')
  assert.ok(metricsService.spec.ports.some((p) => p.name === monitor.spec.endpoints[0].port))
  assert.equal(monitor.spec.endpoints[0].path, '/metrics')
})

/** kubernetes-models module of a document, e.g. kubernetes-models/apps/v1/StatefulSet. */
function modelModule({ apiVersion, kind }) {
  if (apiVersion === 'monitoring.coreos.com/v1') return `@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${kind}`
  return `kubernetes-models/${apiVersion}/${kind}`
}

test('Kubernetes manifests validate against the Kubernetes schemas (kubernetes-models, when installed)', async (t) => {
  try {
    await import('kubernetes-models/v1/Service')
  } catch {
    t.skip('kubernetes-models is not installed (devDependency proposed: kubernetes-models, @kubernetes-models/prometheus-operator)')
    return
  }
  for (const { file, value } of k8sDocuments()) {
    const mod = await import(modelModule(value))
    const Model = mod[value.kind] ?? mod.default
    assert.doesNotThrow(() => new Model(value).validate(), `${file}: ${value.kind} ${value.metadata.name}`)
  }
})

test('HAProxy: TLS termination, X-Forwarded-For or PROXY protocol, health check on /ready', () => {
  const cfg = read('haproxy', 'haproxy.cfg')
  assert.match(cfg, /^\s*bind :443 ssl crt \S+/m)
  assert.match(cfg, /^\s*option forwardfor\b/m)
  assert.match(cfg, /^\s*http-request del-header X-Forwarded-For\b/m, 'client-sent X-Forwarded-For is dropped')
  assert.match(cfg, /send-proxy-v2/)
  assert.match(cfg, /http-check send meth GET uri \/ready/)
  assert.match(cfg, /timeout tunnel/, 'WebSocket connections outlive the HTTP timeouts')
  for (const flag of cfg.matchAll(/--([a-z-]+)/g)) {
    assert.ok([...OPTIONS_BY_ENV.values()].some((o) => o.flag === flag[1]), `--${flag[1]} is a Keel option`)
  }
  // HAProxy's own check (Debian's haproxy, installed by .ci/run), with a stand-in certificate where the
  // recipe names the operator's
  const crt = /^\s*bind :443 ssl crt (\S+)/m.exec(cfg)[1]
  const dir = mkdtempSync(join(tmpdir(), 'keel-haproxy-'))
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=keel.example', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' })
    writeFileSync(join(dir, 'keel.pem'), readFileSync(join(dir, 'cert.pem'), 'utf8') + readFileSync(join(dir, 'key.pem'), 'utf8'))
    writeFileSync(join(dir, 'haproxy.cfg'), cfg.replaceAll(crt, join(dir, 'keel.pem')))
    const check = spawnSync('haproxy', ['-c', '-f', join(dir, 'haproxy.cfg')], { encoding: 'utf8' })
    assert.equal(check.error, undefined, `haproxy could not run (.ci/run installs it): ${check.error?.message}`)
    assert.equal(check.status, 0, `haproxy -c refused the recipe:\n${check.stdout}${check.stderr}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
