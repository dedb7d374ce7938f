import { codebookFiles, folderOf, isCodebookName } from '../codebooks';

describe('codebook files next to a notebook', () => {
  it('lists the files with a codebook suffix in the notebook folder, the ones named so first', async () => {
    const asked: string[] = [];
    const list = async (folder: string) => {
      asked.push(folder);
      return [
        'visits.csv',
        'nb.ipynb',
        'Data_Dictionary.csv',
        'cohort.dta',
        'notes.docx',
        'schema.json',
        'README'
      ];
    };
    expect(await codebookFiles(list, 'study/2024/nb.ipynb')).toEqual([
      'Data_Dictionary.csv',
      'schema.json',
      'cohort.dta',
      'visits.csv'
    ]);
    expect(asked).toEqual(['study/2024']);
  });

  it('reads the root folder for a notebook at the root', async () => {
    const asked: string[] = [];
    await codebookFiles(async folder => {
      asked.push(folder);
      return [];
    }, 'nb.ipynb');
    expect(asked).toEqual(['']);
    expect(folderOf('a/b.ipynb')).toBe('a');
  });

  it('knows the suffixes of every codebook the kernel reads', () => {
    for (const name of ['d.CSV', 's.json', 'c.md', 'f.sav', 'f.zsav', 'f.sas7bdat', 'f.xpt', 'f.dta']) {
      expect(isCodebookName(name)).toBe(true);
    }
    expect(isCodebookName('nb.ipynb')).toBe(false);
  });
});
