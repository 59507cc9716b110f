// Bundles the extension (dist/) and its tests (out/test/) with esbuild. `--watch` rebuilds on change.
import * as esbuild from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readdirSync } from 'node:fs';

const here = dirname(fileURLToPath(import.meta.url));
const common = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, logLevel: 'warning' };

const suites = readdirSync(join(here, 'test', 'suite'))
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => join(here, 'test', 'suite', name));

const builds = [
  { ...common, entryPoints: [join(here, 'src', 'extension.ts')], outfile: join(here, 'dist', 'extension.js'),
    external: ['vscode'], minify: true },
  { ...common, entryPoints: [join(here, 'test', 'index.ts'), ...suites], outdir: join(here, 'out', 'test'),
    outbase: join(here, 'test'), external: ['vscode', 'mocha'] },
  { ...common, entryPoints: [join(here, 'test', 'driver.ts')], outfile: join(here, 'out', 'test', 'driver.js'),
    external: ['playwright-core'] },
];

if (process.argv.includes('--watch')) {
  for (const options of builds) {
    await (await esbuild.context(options)).watch();
  }
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
