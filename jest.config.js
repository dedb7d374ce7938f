const jestJupyterLab = require('@jupyterlab/testing/lib/jest-config');

const esModules = [
  '@codemirror',
  '@jupyter/ydoc',
  '@jupyter/react-components',
  '@jupyter/web-components',
  '@jupyterlab/',
  '@microsoft',
  '@marijn',
  'color',
  'exenv-es6',
  'lib0',
  'marked',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const baseConfig = jestJupyterLab(__dirname);

module.exports = {
  ...baseConfig,
  automock: false,
  reporters: ['default'],
  roots: ['<rootDir>/labextension/src'],
  testRegex: '__tests__/.*\\.spec\\.tsx?$',
  transform: {
    ...baseConfig.transform,
    '^.+\\.tsx?$': ['ts-jest/legacy', { tsconfig: './tsconfig.test.json' }]
  },
  transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
};
