// `npm ci` runs no dependency install script that package.json's allowScripts has not reviewed (and so prints no
// install-script warning): every installed package with an install script is either allowed or denied there.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

describe('install scripts', () => {
  it('every dependency install script is reviewed in allowScripts; the telemetry one is denied', () => {
    const r = spawnSync('npm', ['install-scripts', 'ls', '--json'], { encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const unreviewed = (JSON.parse(r.stdout) as { allowScripts: unknown[] }).allowScripts;
    expect(unreviewed).toEqual([]);
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { allowScripts: Record<string, boolean> };
    expect(pkg.allowScripts['@scarf/scarf']).toBe(false);
    // the WebSocket accelerators ship prebuilt binaries that their install step only locates
    expect(pkg.allowScripts.bufferutil).toBe(true);
    expect(pkg.allowScripts['utf-8-validate']).toBe(true);
  }, 300_000);
});
