export * from './engines.ts';
export * from './reference.ts';
export * from './schema.ts';
