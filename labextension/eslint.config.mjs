// ESLint for the sidebar extension (flat config): ESLint's and typescript-eslint's
// recommended rules plus the JupyterLab extension template's, on the sources, the unit
// tests and the browser tests. Formatting is prettier's (.prettierrc); eslint-config-prettier
// turns off the rules that would disagree with it.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // build outputs (lib/, lib-test/, the bundle in ../sqlnb/labextension) and installs
    ignores: [
      'lib/',
      'lib-test/',
      'node_modules/',
      'ui-tests/node_modules/',
      'ui-tests/test-results/',
      'ui-tests/playwright-report/',
      'ui-tests/.data/',
      '.yarn/'
    ]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      curly: ['error', 'all'],
      eqeqeq: ['error', 'smart'],
      'prefer-arrow-callback': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none', caughtErrors: 'none' }]
    }
  },
  {
    // The browser tests reach JupyterLab's objects through the page's globals
    // (window.jupyterapp, window.sqlnbTest) inside page.evaluate, which run in the browser
    // where this package's types do not exist; Playwright strips the tests' types without
    // checking them, so `any` there says what is true: the shape is JupyterLab's, unchecked.
    files: ['ui-tests/tests/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off'
    }
  },
  {
    // the browser tests' configuration and global setup: CommonJS run by Node, whose
    // module system is require()
    files: ['**/*.js'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off'
    },
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly'
      }
    }
  },
  prettier
);
