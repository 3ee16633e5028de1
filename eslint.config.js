// Lint enforces the architecture of DESIGN.md: no import cycles, a pure src/model, ports not
// adapters in actors/ and src/blocks, no floating promises, type-only imports marked, and the
// style's size limits (files ~400 lines, functions ~60) in the code that ships.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const adapters = ['**/bus/memory*', '**/bus/nats*', '**/store/sqlite/**', '**/store/mongo/**', '**/store/sqlite', '**/store/mongo'];

export default tseslint.config(
  { ignores: ['node_modules/**', '.troupe/**', 'dist/**', 'coverage/**', 'eslint.config.js', 'bin/**', '.prof/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    ignores: ['src/console/**'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      // without these, import-x does not parse .ts dependencies and no-cycle sees no cycle
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // the console (a browser app, its own tsconfig with DOM and JSX): the same rules, its own resolver
    files: ['src/console/**/*.ts', 'src/console/**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './src/console/tsconfig.json' })],
      'import-x/extensions': ['.ts', '.tsx', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // the style's size limits (DESIGN.md): past them, split the file or the function
    files: ['src/**/*.ts', 'src/**/*.tsx', 'actors/**/*.ts', 'config/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['src/model/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          // node:crypto for HMAC and hashes: pure functions of their input, no I/O
          { regex: '^(?!zod$|node:crypto$|acorn$|croner$|\\./).*', message: 'src/model is pure: it may import only zod, node:crypto, acorn, croner and itself.' },
        ],
      }],
    },
  },
  {
    files: ['actors/**/*.ts', 'src/blocks/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{ group: adapters, message: 'Depend on the port (types.ts), never on a concrete adapter: only src/main.ts chooses adapters.' }],
      }],
    },
  },
);
