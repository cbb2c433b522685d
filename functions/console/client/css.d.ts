// Styles are bundled by esbuild (scripts/build-console.ts) into the hashed stylesheet.
declare module '*.css';
