import { describe, expect, it } from 'vitest';
import type { FormInfo } from '../engine/index.js';
import { type FieldParams, formFieldProblems, formFieldsOf } from '../nodes/n8n/form-trigger/index.js';
import { formItem, submittedAtOf, type UploadedFile } from './form-submission.js';

const file = (text: string, fileName: string): UploadedFile => ({
  fileName,
  mimeType: 'text/plain',
  bytes: Buffer.from(text),
});

const formOf = (fields: FieldParams[], version = 2.2): FormInfo => ({
  title: '',
  description: '',
  buttonLabel: 'Submit',
  fields: formFieldsOf(fields, version),
  submittedText: '',
});

const meta = { submittedAt: '2026-01-01T00:00:00.000Z', formMode: 'production' as const };

describe('form fields labelled like Object.prototype members', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    "keeps a file field labelled '%s': its value and its file are the item's own properties",
    (label) => {
      const form = formOf([
        { fieldLabel: label, fieldType: 'file', multipleFiles: false },
        { fieldLabel: `${label} note`, fieldType: 'text' },
      ]);
      const item = formItem(form, [undefined, ['hi']], meta, [[file('bytes', 'a.txt')]]);
      if ('problems' in item) throw new Error(JSON.stringify(item.problems));
      expect(Object.keys(item.json)).toEqual([label, `${label} note`, 'submittedAt', 'formMode']);
      expect(Object.getOwnPropertyDescriptor(item.json, label)?.value).toEqual({
        filename: 'a.txt',
        mimetype: 'text/plain',
        size: 5,
      });
      expect(Object.getPrototypeOf(item.json)).toBe(Object.prototype);
      const binary = item.binary ?? {};
      expect(Object.keys(binary)).toEqual([label]);
      expect(Object.getOwnPropertyDescriptor(binary, label)?.value).toMatchObject({ fileName: 'a.txt' });
      // As stored and read back (JSON), the keys stay.
      const back = JSON.parse(JSON.stringify(item)) as { json: object; binary: object };
      expect(Object.keys(back.binary)).toEqual([label]);
      expect(Object.hasOwn(back.json, label)).toBe(true);
    },
  );

  it("keeps a text field labelled '__proto__' (a plain assignment would drop the string)", () => {
    const item = formItem(formOf([{ fieldLabel: '__proto__', fieldType: 'text' }]), [['v']], meta);
    if ('problems' in item) throw new Error('refused');
    expect(Object.getOwnPropertyDescriptor(item.json, '__proto__')?.value).toBe('v');
  });
});

describe('file fields whose files would share one binary property', () => {
  const clash = (fields: FieldParams[]) => formFieldProblems(fields, 'parameters.formFields.values', 2.2);

  it('are refused at save, naming both fields', () => {
    expect(
      clash([
        { fieldLabel: 'CV file', fieldType: 'file' },
        { fieldLabel: 'CV-file', fieldType: 'file' },
      ]),
    ).toEqual([
      {
        path: 'parameters.formFields.values[1].fieldLabel',
        message:
          "'CV-file' would store its files under the same binary property as 'CV file' ('CV_file'): rename one of them",
      },
    ]);
    // Several files of `Scan` are Scan_0, Scan_1…: a field named `Scan 0` is Scan_0.
    expect(
      clash([
        { fieldLabel: 'Scan', fieldType: 'file' },
        { fieldLabel: 'Scan 0', fieldType: 'file', multipleFiles: false },
      ]).map((p) => p.path),
    ).toEqual(['parameters.formFields.values[1].fieldLabel']);
    expect(
      clash([
        { fieldLabel: 'Scan 0', fieldType: 'file', multipleFiles: false },
        { fieldLabel: 'Scan', fieldType: 'file' },
      ]).map((p) => p.path),
    ).toEqual(['parameters.formFields.values[1].fieldLabel']);
  });

  it('are let through when they cannot meet: one file each, distinct names, a text field alike', () => {
    expect(
      clash([
        { fieldLabel: 'Scan', fieldType: 'file', multipleFiles: false },
        { fieldLabel: 'Scan 0', fieldType: 'file', multipleFiles: false },
        { fieldLabel: 'Photo', fieldType: 'file' },
        { fieldLabel: 'CV file', fieldType: 'file' },
        { fieldLabel: 'CV-file', fieldType: 'text' },
      ]),
    ).toEqual([]);
  });

  it('are refused at submission for a form stored before the check: the second never replaces the first', () => {
    const form = formOf([
      { fieldLabel: 'CV file', fieldType: 'file', multipleFiles: false },
      { fieldLabel: 'CV-file', fieldType: 'file', multipleFiles: false },
    ]);
    const item = formItem(form, [], meta, [[file('first', 'a.txt')], [file('second', 'b.txt')]]);
    expect(item).toEqual({
      problems: [
        {
          field: 1,
          label: 'CV-file',
          message:
            "The files of this field would replace another field's ('CV_file'): the form needs distinct field names",
        },
      ],
    });
  });
});

describe("n8n's submittedAt", () => {
  const now = new Date('2026-03-01T12:00:00.000Z');
  it('is UTC with Z, or the zone with its offset', () => {
    expect(submittedAtOf(now, 'UTC')).toBe('2026-03-01T12:00:00.000Z');
    expect(submittedAtOf(now, 'Asia/Kolkata')).toBe('2026-03-01T17:30:00.000+05:30');
  });
});
