import fs from 'fs';
const f = process.argv[2];
const p = JSON.parse(fs.readFileSync(f, 'utf8'));
const byId = new Map(p.nodes.map(n => [n.id, n]));
const self = new Map();
const dt = p.timeDeltas; let total = 0;
for (let i = 0; i < p.samples.length; i++) { const n = byId.get(p.samples[i]); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) || 0) + dt[i]); total += dt[i]; }
const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 35);
console.log('total ms', total / 1000);
for (const [k, v] of top) console.log((v / 1000).toFixed(0).padStart(7), k);
