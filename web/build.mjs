// Builds the browser bundles that the gateway embeds (package web):
//   playground/dist/playground.{js,css}  GraphiQL, React and graphql-ws
//   dashboard/vendor/graphql-ws.js       graphql-ws as an ES module
// The output is committed. It must be byte-identical when rebuilt from the
// lock file (.ci/run checks it): no source maps, no timestamps, fixed names.
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
process.chdir(here);

const common = {
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2022'],
  platform: 'browser',
  sourcemap: false,
  legalComments: 'eof',
  charset: 'utf8',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
};

await esbuild.build({
  ...common,
  entryPoints: { playground: 'playground/main.jsx' },
  outdir: 'playground/dist',
  jsx: 'automatic',
  loader: { '.js': 'jsx' },
});

await esbuild.build({
  ...common,
  entryPoints: { 'graphql-ws': 'graphql-ws/client' },
  outdir: 'dashboard/vendor',
});
