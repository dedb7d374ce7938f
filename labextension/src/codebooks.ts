import { Contents } from '@jupyterlab/services';

/**
 * The files a study's codebook comes in (docs/codebooks.md): a REDCap data dictionary or a
 * plain codebook (CSV, Markdown), a Frictionless Table Schema (JSON), or a labelled Stata,
 * SPSS or SAS file.
 */
export const CODEBOOK_SUFFIXES = [
  '.csv',
  '.tsv',
  '.txt',
  '.json',
  '.md',
  '.markdown',
  '.dta',
  '.sav',
  '.zsav',
  '.por',
  '.sas7bdat',
  '.xpt'
];

/** Names that say "codebook": listed first. */
const CODEBOOK_WORDS = /dictionar|codebook|schema|datapackage|metadata|variables|labels|mapping|events/i;

/** The file names of one folder (server-relative path, '' for the root). */
export type ListFolder = (folder: string) => Promise<string[]>;

/** Whether a file name has a codebook's suffix. */
export function isCodebookName(name: string): boolean {
  const lower = name.toLowerCase();
  return CODEBOOK_SUFFIXES.some(suffix => lower.endsWith(suffix));
}

/** The folder of a server-relative path ('' for a file at the root). */
export function folderOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at < 0 ? '' : path.slice(0, at);
}

/**
 * The files next to the notebook at `path` that may be its data's codebook, the ones whose
 * names say so first; their names are relative to the notebook's folder, as the server
 * resolves them.
 */
export async function codebookFiles(list: ListFolder, path: string): Promise<string[]> {
  const names = (await list(folderOf(path))).filter(isCodebookName);
  const said = (name: string) => (CODEBOOK_WORDS.test(name) ? 0 : 1);
  return names.sort((a, b) => said(a) - said(b) || a.localeCompare(b));
}

/** A folder lister over the Jupyter contents API (the files only, not the folders). */
export function contentsLister(contents: Contents.IManager): ListFolder {
  return async folder => {
    const model = await contents.get(folder, { content: true });
    const items = (model.content ?? []) as Contents.IModel[];
    return items.filter(item => item.type !== 'directory').map(item => item.name);
  };
}
