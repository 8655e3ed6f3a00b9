/** Types of bin/cli-cache.mjs, for the TypeScript that imports it (its tests). */
export declare function cliCacheDir(root: string): string;
