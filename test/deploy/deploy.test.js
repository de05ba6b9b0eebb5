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
import { parseArgs } from '../../dist/cli/args.js'
import { loadConfig } from '../../dist/config/load.js'
import { OPTIONS, OPTIONS_BY_ENV } from '../../dist/config/options.js'
import { createMetrics } from '../../dist/metrics/metrics.js'
import { accessSetup } from '../../dist/rpc/access.js'
import { repoRoot } from '../helpers/keel-cli.js'
import { waitForLine } from '../helpers/node.js'

const deploy = join(repoRoot, 'deploy')
const read = (...parts) => readFileSync(join(deploy, ...parts), 'utf8')

const BOOLEAN_FLAGS = new Set(OPTIONS.filter((o) => o.type === 'bool').map((o) => o.flag))

/**
 * The configuration `keel <args>` starts with in `env`: Keel's own argv parser, config loader (every flag
 * and variable an option, every value valid, a replica's URLs) and access checks (CIDRs, allow list).
 */
function keelStart(args, env = {}) {
  assert.equal(args[0], 'start')
  const { flags, positionals } = parseArgs(args.slice(1), { booleanFlags: BOOLEAN_FLAGS })
  assert.deepEqual(positionals, [])
  for (const name of Object.keys(env)) assert.ok(OPTIONS_BY_ENV.has(name), `${name} is a Keel option`)
  const config = loadConfig({ flags, env, cwd: repoRoot, onWarning: (message) => assert.fail(message) })
  accessSetup(config, { head: () => undefined })
  return config
}

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
  assert.deepEqual(entrypoint, ['/app/bin/keel.js'])
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-docker-'))
  t.after(() => rmSync(dataDir, { recursive: true, force: true }))
  // the image's environment, with loopback, free ports and a temp folder instead of 0.0.0.0:8545 and /data
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KEEL_')))
  const env = { ...clean, ...envOf(runtime), KEEL_DATA_DIR: dataDir, KEEL_HOST: '127.0.0.1', KEEL_PORT: '0', KEEL_METRICS_PORT: '0' }
  // run as the image runs it: the script as a program, its first line naming node and node's flags
  const child = spawn(entrypoint[0].replace('/app/', `${repoRoot}/`), cmd, { env, stdio: ['ignore', 'pipe', 'pipe'] })
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

const k8s = k8sDocuments().map((d) => d.value)
const k8sNamed = (kind, name) => {
  const found = k8s.find((d) => d.kind === kind && d.metadata.name === name)
  assert.ok(found, `deploy/k8s has the ${kind} ${name}`)
  return found
}
const workloads = k8s.filter((d) => d.kind === 'StatefulSet' || d.kind === 'Deployment')
const selects = (selector, labels) => Object.entries(selector).every(([k, v]) => labels[k] === v)
const podsOf = (selector) => workloads.filter((w) => selects(selector, w.spec.template.metadata.labels))
const namesOf = (ws) => ws.map((w) => w.metadata.name).sort()
const envOfContainer = (c) => Object.fromEntries((c.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]))
const portNamed = (container, name) => container.ports.find((p) => p.name === name)?.containerPort
/** The Service a cluster DNS name (SERVICE.NAMESPACE.svc) reaches, and the pods behind it. */
function k8sService(host) {
  const [name, namespace, svc] = host.split('.')
  assert.equal(svc, 'svc', `${host} is a Service's cluster name`)
  const service = k8sNamed('Service', name)
  assert.equal(service.metadata.namespace, namespace)
  return service
}

test('Kubernetes: the producer StatefulSet with a volume, probes on /health and /ready, publishing to the block stream', () => {
  for (const d of k8s) {
    assert.equal(typeof d.apiVersion, 'string')
    assert.match(d.metadata?.name ?? '', /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, `${d.kind} has a DNS-1123 name`)
  }
  const sts = k8sNamed('StatefulSet', 'keel')
  assert.equal(sts.apiVersion, 'apps/v1')
  assert.equal(sts.spec.replicas, 1, 'one producer')
  assert.ok(selects(sts.spec.selector.matchLabels, sts.spec.template.metadata.labels))
  const pod = sts.spec.template.spec
  const [container] = pod.containers
  assert.equal(pod.securityContext.runAsNonRoot, true)
  assert.equal(container.livenessProbe.httpGet.path, '/health')
  assert.equal(container.readinessProbe.httpGet.path, '/ready')
  const portNames = container.ports.map((p) => p.name)
  for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) assert.ok(portNames.includes(probe.httpGet.port))
  assert.ok(container.resources.requests.cpu && container.resources.requests.memory)
  const config = keelStart(container.args, envOfContainer(container))
  assert.equal(config.dataDir, '/data')
  assert.equal(config.replica, false)
  assert.equal(config.port, portNamed(container, 'rpc'))
  assert.equal(config.metricsPort, portNamed(container, 'metrics'))
  // the stream: the NATS client Service, on the port it serves
  const stream = new URL(config.streamUrl)
  assert.equal(stream.protocol, 'nats:')
  const nats = k8sService(stream.hostname)
  assert.ok(nats.spec.ports.some((p) => p.port === Number(stream.port)))
  assert.deepEqual(namesOf(podsOf(nats.spec.selector)), ['nats'])
  const claim = sts.spec.volumeClaimTemplates[0]
  assert.ok(container.volumeMounts.some((m) => m.name === claim.metadata.name && m.mountPath === '/data'))
  assert.ok(claim.spec.resources.requests.storage)
  assert.ok(pod.terminationGracePeriodSeconds > 30)
  assert.ok(k8s.some((s) => s.kind === 'Service' && s.metadata.name === sts.spec.serviceName && s.spec.clusterIP === 'None'), 'the governing headless Service')
})

test('Kubernetes: a replica Deployment (readiness on /ready, --replica --stream-url --producer-url) with its own volume, an HPA and a PDB', () => {
  const producer = k8sNamed('StatefulSet', 'keel')
  const deployment = k8sNamed('Deployment', 'keel-replica')
  assert.equal(deployment.apiVersion, 'apps/v1')
  assert.equal(deployment.spec.replicas, undefined, 'the HorizontalPodAutoscaler owns the count')
  assert.ok(selects(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels))
  assert.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0, 'an old replica leaves once a new one is ready')
  const pod = deployment.spec.template.spec
  const [container] = pod.containers
  assert.equal(pod.securityContext.runAsNonRoot, true)
  assert.equal(container.readinessProbe.httpGet.path, '/ready')
  assert.equal(container.livenessProbe.httpGet.path, '/health')
  assert.equal(container.startupProbe.httpGet.path, '/health')
  for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) assert.ok(portNamed(container, probe.httpGet.port))
  for (const flag of ['--replica', '--stream-url', '--producer-url']) assert.ok(container.args.includes(flag), `${flag} is given`)
  const config = keelStart(container.args, envOfContainer(container))
  const [producerContainer] = producer.spec.template.spec.containers
  const producerConfig = keelStart(producerContainer.args, envOfContainer(producerContainer))
  assert.equal(config.replica, true)
  assert.equal(config.streamUrl, producerConfig.streamUrl, 'the stream the producer publishes to')
  assert.equal(config.dataDir, '/data')
  assert.equal(config.metricsHost, '0.0.0.0', 'Prometheus scrapes every replica')
  // --producer-url: the producer's pod by its stable name under the governing Service, on its RPC port
  const url = new URL(config.producerUrl)
  const namespace = producer.metadata.namespace
  assert.equal(url.hostname, `${producer.metadata.name}-0.${producer.spec.serviceName}.${namespace}.svc`)
  assert.equal(Number(url.port), producerConfig.port)
  assert.equal(k8sNamed('Service', producer.spec.serviceName).spec.publishNotReadyAddresses, true, 'writes reach the producer even while it is unready')
  // the database: a volume per pod at /data, not a folder shared by several pods
  const mount = container.volumeMounts.find((m) => m.mountPath === '/data')
  const volume = pod.volumes.find((v) => v.name === mount.name)
  assert.ok(volume.ephemeral?.volumeClaimTemplate.spec.resources.requests.storage, 'a claim of its own per pod')
  assert.ok(container.resources.requests.cpu, 'the autoscaler measures CPU against the request')

  const hpa = k8sNamed('HorizontalPodAutoscaler', 'keel-replica')
  assert.equal(hpa.apiVersion, 'autoscaling/v2')
  assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name })
  assert.ok(hpa.spec.minReplicas >= 2 && hpa.spec.maxReplicas > hpa.spec.minReplicas)
  assert.ok(hpa.spec.metrics.some((m) => m.resource?.name === 'cpu'))
  const pdbs = k8s.filter((d) => d.kind === 'PodDisruptionBudget' && selects(d.spec.selector.matchLabels, deployment.spec.template.metadata.labels))
  assert.equal(pdbs.length, 1)
  assert.ok(pdbs[0].spec.maxUnavailable === 1 || pdbs[0].spec.minAvailable < hpa.spec.minReplicas)
})

test('Kubernetes: every Keel pod shares one Redis (rate limits, polling filters) that keeps no data, and falls back strict at any scale', () => {
  const keelPods = [k8sNamed('StatefulSet', 'keel'), k8sNamed('Deployment', 'keel-replica')]
  const hpa = k8sNamed('HorizontalPodAutoscaler', 'keel-replica')
  const urls = new Set()
  for (const w of keelPods) {
    const [container] = w.spec.template.spec.containers
    const config = keelStart(container.args, envOfContainer(container))
    assert.ok(config.redisUrl, `${w.metadata.name} has --redis-url`)
    urls.add(config.redisUrl)
    const url = new URL(config.redisUrl)
    assert.equal(url.protocol, 'redis:')
    const service = k8sService(url.hostname)
    assert.ok(service.spec.ports.some((p) => p.port === Number(url.port)))
    assert.deepEqual(namesOf(podsOf(service.spec.selector)), ['redis'])
    // while Redis is down each pod admits rate / N: N at least every pod keel-rpc may have
    assert.ok(config.rateLimitNodes >= 1 + hpa.spec.maxReplicas, `${w.metadata.name}: --rate-limit-nodes ${config.rateLimitNodes}`)
  }
  assert.equal(urls.size, 1, 'one Redis for all')
  const redis = k8sNamed('Deployment', 'redis')
  assert.equal(redis.spec.replicas, 1)
  const [container] = redis.spec.template.spec.containers
  assert.match(container.image, /^redis:7\./)
  const args = container.args.join(' ')
  assert.match(args, /--save ""? ?--appendonly no|--save\s+--appendonly no/, 'no persistence')
  assert.equal(container.args[container.args.indexOf('--appendonly') + 1], 'no')
  assert.equal(container.args[container.args.indexOf('--save') + 1], '')
  assert.equal(redis.spec.template.spec.securityContext.runAsNonRoot, true)
  assert.ok(container.readinessProbe && container.resources.limits.memory)
})

/** A Kubernetes quantity or a NATS size (256Mi, 100Gi, 50G) in bytes. */
function bytesOf(quantity) {
  const [, n, unit = ''] = /^(\d+)([KMGT]i?)?B?$/i.exec(quantity)
  const power = ' KMGT'.indexOf(unit[0]?.toUpperCase() ?? ' ')
  return Number(n) * (unit.length === 2 ? 1024 : 1000) ** Math.max(power, 0)
}

test('Kubernetes: NATS with JetStream, three nodes with file storage on volumes; its config passes nats-server -t', () => {
  const sts = k8sNamed('StatefulSet', 'nats')
  assert.equal(sts.spec.replicas, 3)
  const headless = k8sNamed('Service', sts.spec.serviceName)
  assert.equal(headless.spec.clusterIP, 'None')
  assert.equal(headless.spec.publishNotReadyAddresses, true, 'the nodes find each other before they are ready')
  const [container] = sts.spec.template.spec.containers
  assert.match(container.image, /^nats:2\./)
  const configArg = container.command.indexOf('--config')
  const configPath = container.command[configArg + 1]
  const configMount = container.volumeMounts.find((m) => m.mountPath === dirname(configPath))
  const configMap = k8sNamed('ConfigMap', sts.spec.template.spec.volumes.find((v) => v.name === configMount.name).configMap.name)
  const conf = configMap.data[configPath.split('/').at(-1)]
  const value = (key, text = conf) => new RegExp(`^\\s*${key}:\\s*(\\S+)\\s*$`, 'm').exec(text)?.[1]
  assert.equal(Number(value('port')), portNamed(container, 'client'))
  assert.equal(Number(value('http_port')), portNamed(container, 'monitor'))
  assert.equal(value('server_name'), '$POD_NAME')
  assert.ok(container.env.some((e) => e.name === 'POD_NAME' && e.valueFrom.fieldRef.fieldPath === 'metadata.name'))
  // JetStream on the volume, sized under the volume and at least twice the producer's chain volume
  const jetstream = /^jetstream\s*\{([^}]*)\}/m.exec(conf)[1]
  const claim = sts.spec.volumeClaimTemplates[0]
  assert.equal(container.volumeMounts.find((m) => m.name === claim.metadata.name).mountPath, value('store_dir', jetstream))
  const maxFileStore = bytesOf(value('max_file_store', jetstream))
  assert.ok(maxFileStore <= bytesOf(claim.spec.resources.requests.storage))
  const chainVolume = k8sNamed('StatefulSet', 'keel').spec.volumeClaimTemplates[0].spec.resources.requests.storage
  assert.ok(maxFileStore >= 2 * bytesOf(chainVolume), 'the store holds the stream and a snapshot of the chain')
  // a cluster of the StatefulSet's pods under the headless Service
  const cluster = /^cluster\s*\{([\s\S]*?)^\}/m.exec(conf)[1]
  assert.equal(Number(value('port', cluster)), portNamed(container, 'cluster'))
  const routes = [...cluster.matchAll(/nats:\/\/(\S+)/g)].map((m) => m[1])
  assert.deepEqual(routes, [0, 1, 2].map((i) => `${sts.metadata.name}-${i}.${headless.metadata.name}:${portNamed(container, 'cluster')}`))
  for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
    assert.match(probe.httpGet.path, /^\/healthz/)
    assert.ok(portNamed(container, probe.httpGet.port))
  }
  const [pdb] = k8s.filter((d) => d.kind === 'PodDisruptionBudget' && selects(d.spec.selector.matchLabels, sts.spec.template.metadata.labels))
  assert.equal(pdb.spec.maxUnavailable, 1, 'a majority of the three stays up')
  // nats-server's own check (Debian's nats-server, installed by .ci/run)
  const dir = mkdtempSync(join(tmpdir(), 'keel-nats-conf-'))
  try {
    writeFileSync(join(dir, 'nats.conf'), conf)
    const check = spawnSync('nats-server', ['-t', '-c', join(dir, 'nats.conf')], { encoding: 'utf8', env: { ...process.env, POD_NAME: 'nats-0' } })
    assert.equal(check.error, undefined, `nats-server could not run (.ci/run installs it): ${check.error?.message}`)
    assert.equal(check.status, 0, `nats-server -t refused the config:\n${check.stdout}${check.stderr}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('Kubernetes: one public Service for reads and writes, metrics of every Keel pod, PDBs, selectors that do not overlap', () => {
  const producer = k8sNamed('StatefulSet', 'keel')
  const replicas = k8sNamed('Deployment', 'keel-replica')
  // no workload's selector takes another's pods
  for (const w of workloads) assert.deepEqual(podsOf(w.spec.selector.matchLabels), [w], `${w.kind} ${w.metadata.name} selects its own pods only`)
  for (const s of k8s.filter((d) => d.kind === 'Service')) {
    const pods = podsOf(s.spec.selector)
    assert.ok(pods.length > 0, `${s.metadata.name} selects pods`)
    for (const w of pods) {
      for (const p of s.spec.ports) assert.ok(portNamed(w.spec.template.spec.containers[0], p.targetPort), `${s.metadata.name} targets a port of ${w.metadata.name}`)
    }
  }
  const rpc = k8sNamed('Service', 'keel-rpc')
  assert.deepEqual(namesOf(podsOf(rpc.spec.selector)), namesOf([producer, replicas]), 'reads and writes enter at one address; replicas forward writes')
  assert.equal(rpc.spec.publishNotReadyAddresses, undefined, 'only ready pods get traffic')
  for (const pdb of k8s.filter((d) => d.kind === 'PodDisruptionBudget')) {
    assert.equal(pdb.apiVersion, 'policy/v1')
    assert.equal(podsOf(pdb.spec.selector.matchLabels).length, 1, `${pdb.metadata.name} covers one workload`)
  }
  const producerPdb = k8s.find((d) => d.kind === 'PodDisruptionBudget' && podsOf(d.spec.selector.matchLabels)[0] === producer)
  assert.equal(producerPdb.spec.minAvailable, 1)
  const monitor = k8sNamed('ServiceMonitor', 'keel')
  assert.equal(monitor.apiVersion, 'monitoring.coreos.com/v1')
  const metricsServices = k8s.filter((d) => d.kind === 'Service' && selects(monitor.spec.selector.matchLabels, d.metadata.labels ?? {}))
  assert.equal(metricsServices.length, 1, 'the ServiceMonitor selects one Service')
  const [metrics] = metricsServices
  assert.deepEqual(namesOf(podsOf(metrics.spec.selector)), namesOf([producer, replicas]), 'Prometheus scrapes the producer and every replica')
  assert.ok(metrics.spec.ports.some((p) => p.name === monitor.spec.endpoints[0].port))
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

/**
 * HAProxy's own check (Debian's haproxy, installed by .ci/run) of a config, with a stand-in certificate
 * where the recipe names the operator's.
 */
function haproxyCheck(cfg) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-haproxy-'))
  try {
    const crt = /^\s*bind :443 ssl crt (\S+)/m.exec(cfg)?.[1]
    if (crt !== undefined) {
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
        '-subj', '/CN=keel.example', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
      ], { stdio: 'ignore' })
      writeFileSync(join(dir, 'keel.pem'), readFileSync(join(dir, 'cert.pem'), 'utf8') + readFileSync(join(dir, 'key.pem'), 'utf8'))
      cfg = cfg.replaceAll(crt, join(dir, 'keel.pem'))
    }
    writeFileSync(join(dir, 'haproxy.cfg'), cfg)
    const check = spawnSync('haproxy', ['-c', '-f', join(dir, 'haproxy.cfg')], { encoding: 'utf8' })
    assert.equal(check.error, undefined, `haproxy could not run (.ci/run installs it): ${check.error?.message}`)
    assert.equal(check.status, 0, `haproxy -c refused the recipe:\n${check.stdout}${check.stderr}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('HAProxy: TLS termination, X-Forwarded-For or PROXY protocol, health check on /ready', () => {
  const cfg = read('haproxy', 'haproxy.cfg')
  assert.match(cfg, /^\s*bind :443 ssl crt \S+/m)
  assert.match(cfg, /^\s*option forwardfor\b/m)
  assert.match(cfg, /^\s*http-request del-header X-Forwarded-For\b/m, 'client-sent X-Forwarded-For is dropped')
  assert.match(cfg, /send-proxy-v2/)
  // uWebSockets.js never answers HTTP/1.0, HAProxy's default for checks (test/replication/haproxy.test.js runs one)
  for (const check of cfg.matchAll(/^\s*http-check send .*$/gm)) assert.match(check[0], /meth GET uri \/ready ver HTTP\/1\.1 hdr Host \S+$/)
  assert.match(cfg, /timeout tunnel/, 'WebSocket connections outlive the HTTP timeouts')
  for (const flag of cfg.matchAll(/--([a-z-]+)/g)) {
    assert.ok([...OPTIONS_BY_ENV.values()].some((o) => o.flag === flag[1]), `--${flag[1]} is a Keel option`)
  }
  haproxyCheck(cfg)
})

/** A compose file, YAML merge keys (<<: *anchor) resolved as Docker Compose resolves them. */
function composeFile(name) {
  const [doc] = parseAllDocuments(read('compose', name), { merge: true })
  assert.deepEqual(doc.errors, [])
  return doc.toJS()
}

test('compose (replicas): a producer, two replicas with volumes of their own, NATS with JetStream, HAProxy, Prometheus, Grafana', () => {
  const compose = composeFile('docker-compose.replicas.yml')
  const base = composeFile('docker-compose.yml')
  const { keel, nats, haproxy, prometheus, grafana } = compose.services
  const replicas = Object.keys(compose.services).filter((name) => name.startsWith('keel-replica-'))
  assert.equal(replicas.length, 2)
  // the producer is docker-compose.yml's: same project, service, image and volume (its chain carries over)
  assert.equal(compose.name, base.name)
  assert.deepEqual(keel.build, base.services.keel.build)
  assert.ok(keel.volumes.includes('keel-data:/data'))
  const ipOf = (service) => Object.values(service.networks)[0].ipv4_address
  const producer = keelStart(keel.command, keel.environment)
  assert.equal(producer.replica, false)
  const stream = new URL(producer.streamUrl)
  assert.equal(stream.hostname, 'nats')
  // NATS: JetStream with its store on a volume
  assert.match(nats.image, /^nats:2\./)
  assert.deepEqual(nats.command.slice(0, 3), ['-js', '-sd', '/data'])
  assert.ok(nats.volumes.some((v) => /^[\w-]+:\/data$/.test(v) && v.split(':')[0] in compose.volumes))
  assert.ok(nats.healthcheck.test.join(' ').includes('/healthz'))
  assert.equal(Number(stream.port), 4222)
  // the replicas: --replica, the producer's stream, the producer's RPC port, each its own /data volume
  const dataVolumes = new Set(['keel-data'])
  for (const name of replicas) {
    const service = compose.services[name]
    for (const flag of ['--replica', '--stream-url', '--producer-url']) assert.ok(service.command.includes(flag), `${name}: ${flag}`)
    const config = keelStart(service.command, service.environment)
    assert.equal(config.replica, true)
    assert.equal(config.streamUrl, producer.streamUrl)
    assert.equal(config.producerUrl, `http://keel:${producer.port}`)
    assert.equal(config.dataDir, '/data')
    const volume = service.volumes.find((v) => v.endsWith(':/data')).split(':')[0]
    assert.ok(volume in compose.volumes && !dataVolumes.has(volume), `${name} keeps its chain in a volume of its own`)
    dataVolumes.add(volume)
    assert.equal(service.image, keel.image)
    // HAProxy's forwarded address is believed; the producer does not rate-limit a replica's forwarded writes
    assert.equal(config.trustedProxies, `${ipOf(haproxy)}/32`)
    assert.ok(producer.rateLimitAllowList.split(',').includes(`${ipOf(service)}=0`), `${name} is not rate-limited by the producer`)
  }
  // one Redis for every node, without persistence; the fallback limit divides by the nodes that take traffic
  const { redis } = compose.services
  assert.match(redis.image, /^redis:7\./)
  assert.equal(redis.command[redis.command.indexOf('--save') + 1], '')
  assert.equal(redis.command[redis.command.indexOf('--appendonly') + 1], 'no')
  for (const name of ['keel', ...replicas]) {
    const config = keelStart(compose.services[name].command, compose.services[name].environment)
    assert.equal(config.redisUrl, 'redis://redis:6379', `${name} shares the Redis`)
    assert.equal(config.rateLimitNodes, replicas.length, `${name}: the replicas take the traffic`)
    assert.ok((compose.services[name].depends_on ?? []).includes('redis'))
  }
  assert.equal(producer.trustedProxies, `${ipOf(haproxy)}/32`)
  // HAProxy: the entry point, with the replicas' config
  assert.deepEqual(haproxy.ports, [`${producer.port}:${producer.port}`])
  assert.ok(!(keel.ports ?? []).some((p) => p.endsWith(`:${producer.port}`)), 'the producer is reached through HAProxy only')
  assert.ok(haproxy.volumes.includes('../haproxy/haproxy-replicas.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro'))
  const cfg = read('haproxy', 'haproxy-replicas.cfg')
  const servers = [...cfg.matchAll(/^\s*server (\S+) (\S+):(\d+)(.*)$/gm)].map(([, , host, port, rest]) => ({ host, port: Number(port), backup: /\bbackup\b/.test(rest) }))
  assert.deepEqual(servers.filter((s) => !s.backup).map((s) => s.host).sort(), replicas.sort(), 'the replicas take the traffic')
  assert.deepEqual(servers.filter((s) => s.backup).map((s) => s.host), ['keel'], 'the producer stands by')
  for (const s of servers) assert.equal(s.port, keelStart(compose.services[s.host].command, compose.services[s.host].environment).port)
  assert.match(cfg, new RegExp(`^\\s*bind :${producer.port}$`, 'm'))
  // Prometheus in the producer's namespace: the producer on loopback, the replicas on the network
  assert.equal(prometheus.network_mode, 'service:keel')
  assert.ok(prometheus.volumes.includes('./prometheus-replicas.yml:/etc/prometheus/prometheus.yml:ro'))
  assert.ok(prometheus.volumes.includes('../prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro'))
  const [promDoc] = parseAllDocuments(read('compose', 'prometheus-replicas.yml'))
  const scrape = promDoc.toJS()
  assert.ok(scrape.rule_files.includes('alerts.yml'))
  const targets = scrape.scrape_configs.find((c) => c.job_name === 'keel').static_configs.flatMap((c) => c.targets)
  assert.equal(producer.metricsHost, '127.0.0.1')
  const replicaTargets = replicas.map((name) => {
    const config = keelStart(compose.services[name].command, compose.services[name].environment)
    assert.equal(config.metricsHost, '0.0.0.0')
    return `${name}:${config.metricsPort}`
  })
  assert.deepEqual(targets.sort(), [`127.0.0.1:${producer.metricsPort}`, ...replicaTargets].sort())
  // Grafana reaches Prometheus on the producer's address, as in docker-compose.yml
  assert.deepEqual(grafana.volumes, base.services.grafana.volumes)
  assert.ok(keel.ports.includes('127.0.0.1:9090:9090'))
  for (const service of Object.values(compose.services)) {
    for (const volume of service.volumes ?? []) {
      const source = volume.split(':')[0]
      if (source.startsWith('.')) assert.ok(existsSync(join(deploy, 'compose', source)), `${source} exists`)
      else assert.ok(source in compose.volumes, `volume ${source} is declared`)
    }
  }
})

test('HAProxy (replicas): X-Forwarded-For, health check on /ready, long tunnel timeout; haproxy -c accepts it', () => {
  const cfg = read('haproxy', 'haproxy-replicas.cfg')
  assert.match(cfg, /^\s*option forwardfor\b/m)
  assert.match(cfg, /^\s*http-request del-header X-Forwarded-For\b/m, 'client-sent X-Forwarded-For is dropped')
  assert.match(cfg, /^\s*http-check send meth GET uri \/ready ver HTTP\/1\.1 hdr Host \S+$/m, 'checks go as HTTP/1.1: uWebSockets.js never answers HTTP/1.0')
  assert.match(cfg, /^\s*http-check expect status 200$/m)
  assert.match(cfg, /^\s*timeout tunnel \d+[smh]$/m, 'WebSocket connections outlive the HTTP timeouts')
  assert.match(cfg, /^\s*default-server .*\bcheck\b/m, 'every server is health-checked')
  for (const flag of cfg.matchAll(/--([a-z-]+)/g)) {
    assert.ok([...OPTIONS_BY_ENV.values()].some((o) => o.flag === flag[1]), `--${flag[1]} is a Keel option`)
  }
  haproxyCheck(cfg)
})

/**
 * Every metric a node exports: name -> label names. docs/metrics.md (generated from the registry, and
 * checked against it by test/docs) lists Keel's own; the registry adds prom-client's process and Node.js
 * metrics. A histogram is also its _bucket, _sum and _count series.
 */
function exportedMetrics() {
  const metrics = new Map()
  const add = (name, type, labels) => {
    metrics.set(name, labels)
    if (type === 'histogram') {
      metrics.set(`${name}_bucket`, [...labels, 'le'])
      for (const suffix of ['_sum', '_count']) metrics.set(`${name}${suffix}`, labels)
    }
  }
  for (const [, name, type, labels] of readFileSync(join(repoRoot, 'docs', 'metrics.md'), 'utf8').matchAll(/^\| `(keel_\w+)` \| (\w+) \| ([^|]*) \|/gm)) {
    add(name, type, [...labels.matchAll(/`(\w+)`/g)].map((m) => m[1]))
  }
  for (const m of createMetrics({ isKnownMethod: () => true, version: '0.0.0', chainId: 1 }).register.registry.getMetricsAsArray()) {
    if (!metrics.has(m.name)) add(m.name, m.constructor.name.toLowerCase(), [...(m.labelNames ?? [])])
  }
  return metrics
}

/** `metric{label="…",…}` selectors in a PromQL text, with the label names each one matches on. */
const selectorsOf = (promql) =>
  [...promql.matchAll(/\b(keel_[a-z0-9_]+)(?:\{([^}]*)\})?/g)].map(([, name, matchers = '']) => ({
    name,
    labels: [...matchers.matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1]),
  }))

/** Labels Prometheus adds to every series: the target's, and the chain label of the scrape configs. */
const TARGET_LABELS = new Set(['instance', 'job', 'chain', 'pod', 'namespace', 'service', 'container', 'endpoint'])

test('alerts and the Grafana dashboard use only metrics and labels Keel registers; replication is covered', () => {
  const metrics = exportedMetrics()
  assert.deepEqual(metrics.get('keel_stream_backlog_blocks'), ['role'])
  assert.ok(metrics.has('keel_nodejs_eventloop_lag_p99_seconds'))
  const alerts = parseAllDocuments(read('prometheus', 'alerts.yml'))[0].toJS()
  const rules = alerts.groups.flatMap((g) => g.rules)
  const dashboard = JSON.parse(read('grafana', 'keel-dashboard.json'))
  const exprs = [...rules.map((r) => r.expr), ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr))]
  for (const expr of exprs) {
    for (const { name, labels } of selectorsOf(expr)) {
      assert.ok(metrics.has(name), `${name} is a metric Keel registers (docs/metrics.md)`)
      for (const label of labels) assert.ok(metrics.get(name).includes(label) || TARGET_LABELS.has(label), `${name} has a ${label} label`)
    }
  }
  const rule = (name) => {
    const found = rules.find((r) => r.alert === name)
    assert.ok(found, `alert ${name}`)
    return { ...found, expr: found.expr.replace(/\s+/g, ' ').trim() }
  }
  assert.match(rule('KeelReplicaBehind').expr, /^keel_stream_backlog_blocks\{role="replica"\} > \d+$/)
  assert.equal(rule('KeelReplicaBehind').for, '2m')
  assert.equal(rule('KeelReplicaStopped').expr, 'keel_stream_stopped{role="replica"} == 1')
  assert.equal(rule('KeelProducerFenced').expr, 'keel_stream_stopped{role="producer"} == 1')
  assert.equal(rule('KeelProducerStreamDisconnected').expr, 'keel_stream_connected{role="producer"} == 0')
  assert.equal(rule('KeelProducerStreamDisconnected').for, '1m')
  assert.match(rule('KeelProducerStreamBacklog').expr, /keel_stream_backlog_blocks\{role="producer"\}/)
  assert.equal(rule('KeelProducerStreamBacklog').for, '1m')
  assert.match(rule('KeelReplicaLagHigh').expr, /^histogram_quantile\(0\.99, sum by \(instance, le\) \(rate\(keel_replica_lag_seconds_bucket\[\w+\]\)\)\) > [\d.]+$/)
  for (const r of rules.filter((r) => r.alert.startsWith('KeelReplica') || r.alert.startsWith('KeelProducer'))) {
    assert.ok(['critical', 'warning'].includes(r.labels.severity), r.alert)
    assert.ok(r.annotations.summary && r.annotations.description, r.alert)
  }
  // the dashboard's replication row: lag p50 and p99, blocks behind, stream connected, bytes applied
  const rowAt = dashboard.panels.findIndex((p) => p.type === 'row' && p.title === 'Replication')
  assert.ok(rowAt > 0, 'a Replication row')
  const next = dashboard.panels.findIndex((p, i) => i > rowAt && p.type === 'row')
  const row = dashboard.panels.slice(rowAt + 1, next === -1 ? undefined : next).flatMap((p) => p.targets.map((t) => t.expr))
  for (const q of ['0.5', '0.99']) assert.ok(row.some((e) => e.startsWith(`histogram_quantile(${q},`) && e.includes('keel_replica_lag_seconds_bucket')), `lag p${q.slice(2)}`)
  assert.ok(row.some((e) => e.startsWith('keel_stream_backlog_blocks{') && e.includes('role="replica"')), 'blocks behind')
  assert.ok(row.some((e) => e.startsWith('keel_stream_connected{')), 'stream connected')
  assert.ok(row.some((e) => /rate\(keel_replica_applied_bytes_total\{/.test(e)), 'bytes applied rate')
  // panel ids are unique and panels do not overlap
  const ids = dashboard.panels.map((p) => p.id)
  assert.equal(new Set(ids).size, ids.length)
  const cells = new Set()
  for (const { gridPos: g, title } of dashboard.panels) {
    for (let y = g.y; y < g.y + g.h; y++) {
      for (let x = g.x; x < g.x + g.w; x++) {
        assert.ok(!cells.has(`${x},${y}`), `panel ${title} overlaps another`)
        cells.add(`${x},${y}`)
      }
    }
  }
})

/**
 * An OTTERSCAN_CONFIG as the explorer recipes write it (compose variables at their defaults): a whole
 * configuration for this chain that Otterscan's useConfig reads (reference: explorer.md §2).
 */
function checkOtterscanConfig(text) {
  const config = JSON.parse(text.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1'))
  assert.match(config.erigonURL, /^https?:\/\//, 'Keel\'s URL as the browser sees it')
  assert.equal(config.beaconAPI, undefined, 'no beacon API: the UI skips beacon calls only when the key is absent')
  assert.equal(config.experimental, false, 'no ots2_ calls')
  assert.equal(config.chainInfo.nativeCurrency.decimals, 18)
  for (const field of ['name', 'symbol']) assert.ok(config.chainInfo.nativeCurrency[field])
  assert.ok(config.chainInfo.name)
  assert.equal(config.revertTraces.enabled, false, 'revert traces need trace_replayTransaction vmTrace')
  assert.equal(config.externalDataSources.ccip.ensLookups, false)
  for (const source of Object.values(config.sourcify.sources)) {
    assert.match(source.url, /^https?:\/\//)
    assert.ok(['RepositoryV1', 'RepositoryV2'].includes(source.backendFormat))
  }
  return config
}

test('explorer: Otterscan in compose, a pinned release with a full OTTERSCAN_CONFIG pointed at Keel\'s published port', () => {
  const compose = composeFile('docker-compose.explorer.yml')
  assert.equal(compose.name, composeFile('docker-compose.yml').name, 'added to the same project as either stack')
  const { otterscan } = compose.services
  assert.match(otterscan.image, /^otterscan\/otterscan:v\d+\.\d+\.\d+$/)
  const config = checkOtterscanConfig(otterscan.environment.OTTERSCAN_CONFIG)
  const published = composeFile('docker-compose.yml').services.keel.ports.find((p) => p.endsWith(':8545'))
  assert.equal(new URL(config.erigonURL).port, published.split(':')[0])
  assert.ok(otterscan.ports.some((p) => p.endsWith(':80')), 'nginx in the image listens on 80')
})

test('explorer: Otterscan in Kubernetes, its config from a ConfigMap, served by the Ingress next to the RPC host it calls', () => {
  const deployment = k8sNamed('Deployment', 'otterscan')
  const container = deployment.spec.template.spec.containers[0]
  assert.match(container.image, /^otterscan\/otterscan:v\d+\.\d+\.\d+$/)
  assert.equal(container.image, composeFile('docker-compose.explorer.yml').services.otterscan.image, 'one release in both recipes')
  const configMap = k8sNamed('ConfigMap', container.envFrom[0].configMapRef.name)
  const config = checkOtterscanConfig(configMap.data.OTTERSCAN_CONFIG)
  const ingress = k8sNamed('Ingress', 'keel-explorer')
  const rule = (service) => ingress.spec.rules.find((r) => r.http.paths.some((p) => p.backend.service.name === service))
  const explorer = rule('otterscan')
  const rpc = rule('keel-rpc')
  assert.ok(explorer && rpc && explorer.host !== rpc.host)
  assert.equal(new URL(config.erigonURL).host, rpc.host, 'the browser calls Keel at the Ingress\'s RPC host')
  assert.equal(rpc.http.paths[0].backend.service.port.name, 'rpc')
  assert.equal(k8sNamed('Service', 'otterscan').spec.ports[0].targetPort, portNamed(container, 'http') === 80 ? 'http' : undefined)
})

test('explorer: HAProxy serves Otterscan on the explorer host and Keel on every other', () => {
  const cfg = read('haproxy', 'haproxy.cfg')
  assert.match(cfg, /^\s*use_backend otterscan if \{ hdr_beg\(host\) -i explorer\. \}/m)
  assert.match(cfg, /^backend otterscan\n(?:.*\n)*?\s*server \S+ 127\.0\.0\.1:5100 /m)
  assert.match(cfg, /^\s*default_backend keel$/m)
})
