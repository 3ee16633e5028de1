// Builds the console (SPEC §8) into dist/console: `make console`, run by `make setup`.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    // the graph and editor libraries are large; one app bundle served from this origin is fine
    chunkSizeWarningLimit: 4096,
  },
});
