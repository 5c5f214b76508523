import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { jsonFormFields, zipEntryName } from './index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

/** Form Trigger → one Form page with `parameters`; the save-time problems. */
function problemsOf(parameters: Record<string, unknown>) {
  return engine.validate(
    workflow(
      [
        {
          name: 'T',
          type: 'n8n-nodes-base.formTrigger',
          typeVersion: 2.2,
          parameters: { formFields: { values: [{ fieldLabel: 'Name' }] }, options: { path: 'f' } },
        },
        { name: 'F', type: 'n8n-nodes-base.form', typeVersion: 1, parameters },
      ],
      [['T', 'F']],
    ),
  );
}

describe("n8n Form page's JSON-defined fields (defineForm: json)", () => {
  it("reads n8n's field shape, with n8n's defaults", () => {
    const fields = jsonFormFields(
      JSON.stringify([
        { fieldLabel: 'Name', requiredField: true, placeholder: 'Ada' },
        { fieldLabel: 'Plan', fieldType: 'dropdown', fieldOptions: { values: [{ option: 'Free' }] } },
      ]),
    );
    expect(fields).toEqual([
      { fieldLabel: 'Name', fieldType: 'text', requiredField: true, placeholder: 'Ada' },
      { fieldLabel: 'Plan', fieldType: 'dropdown', fieldOptions: { values: [{ option: 'Free' }] } },
    ]);
  });

  it('refuses what is not JSON, not an array, or not a field, naming the place', () => {
    expect(() => jsonFormFields('[{')).toThrow('the form fields JSON is not valid JSON');
    expect(() => jsonFormFields('{"fieldLabel":"x"}')).toThrow('must be an array of fields');
    expect(() => jsonFormFields('[{"fieldLabel":"x","colour":"red"}]')).toThrow(/\/0/);
    expect(() => jsonFormFields('[{"fieldLabel":"x","fieldType":"rocket"}]')).toThrow(/\/0\/fieldType/);
    expect(() =>
      jsonFormFields(JSON.stringify(Array.from({ length: 201 }, (_, i) => ({ fieldLabel: `f${i}` })))),
    ).toThrow();
  });

  it('is checked at save as the editor fields are; an expression waits for the run', () => {
    expect(
      problemsOf({ defineForm: 'json', jsonOutput: '[{"fieldLabel":"Age","fieldType":"number"}]' }),
    ).toEqual([]);
    expect(problemsOf({ defineForm: 'json', jsonOutput: 'nope' })).toEqual([
      { path: 'nodes[1].parameters.jsonOutput', message: 'Form: the form fields JSON is not valid JSON' },
    ]);
    // Two fields with one label: the same refusal as the editor's fields get.
    const twice = problemsOf({ defineForm: 'json', jsonOutput: '[{"fieldLabel":"A"},{"fieldLabel":"A"}]' });
    expect(twice.map((p) => p.path)).toEqual(['nodes[1].parameters.jsonOutput[1].fieldLabel']);
    expect(problemsOf({ defineForm: 'json', jsonOutput: '={{ JSON.stringify($json.fields) }}' })).toEqual([]);
  });
});

describe("n8n Form page's labels given as expressions (n8n evaluates them when the page is built)", () => {
  it('imports them, evaluates them over the input when the node runs, and checks them then', async () => {
    const fields = {
      values: [
        { fieldLabel: '={{ $json.questions[0] }}' },
        { fieldLabel: '={{ $json.questions[1] }}', fieldType: 'textarea' },
        { fieldLabel: '=Anything else?' },
      ],
    };
    expect(problemsOf({ formFields: fields, options: { formTitle: '={{ $json.title }}' } })).toEqual([]);
    const run = async (json: Record<string, unknown>) =>
      engine.run(
        workflow(
          [
            { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
            {
              name: 'F',
              type: 'n8n-nodes-base.form',
              typeVersion: 1,
              parameters: { formFields: fields, options: { formTitle: '={{ $json.title }}' } },
            },
          ],
          [['T', 'F']],
        ),
        { nodeName: 'T', items: [{ json: json as never }] },
        ctx,
      );
    const page = await run({ title: 'Interview', questions: ['Why?', 'How?'] });
    expect(page.status).toBe('waiting');
    const waiting = page.state.nodeContext?.F?.formWaiting as {
      form: { title: string; fields: Array<{ label: string; key: string }> };
    };
    expect(waiting.form.title).toBe('Interview');
    expect(waiting.form.fields.map((f) => [f.label, f.key])).toEqual([
      ['Why?', 'Why?'],
      ['How?', 'How?'],
      ['Anything else?', 'Anything else?'],
    ]);
    // Evaluated to the same label twice: the node fails as a fixed duplicate is refused at save.
    const twice = await run({ title: 'T', questions: ['Same', 'Same'] });
    expect(twice.state.error?.message).toMatch(/'Same' is used twice/);
  });

  it("a Form Trigger's `=text` without {{ }} is that text; a real expression stays refused (no item to read)", () => {
    const trigger = (parameters: Record<string, unknown>) =>
      engine.validate(
        workflow([{ name: 'T', type: 'n8n-nodes-base.formTrigger', typeVersion: 2.2, parameters }], []),
      );
    expect(
      trigger({
        formTitle: '=UK Practical Driving Test Interview',
        formFields: { values: [{ fieldLabel: '=Your name' }] },
        options: { path: 'interview' },
      }),
    ).toEqual([]);
    expect(
      trigger({
        formTitle: '={{ $json.output.question }}',
        formFields: { values: [{ fieldLabel: 'A' }] },
      }).map((p) => p.path),
    ).toEqual(['nodes[0].parameters.formTitle']);
  });
});

describe("n8n Form page's time limit (limitWaitTime)", () => {
  /** Runs Form Trigger item → Form page; the outcome (testDeps' clock: 2030-01-02T03:04:05Z). */
  async function runPage(parameters: Record<string, unknown>, maxWaitMs?: number) {
    const e = new WorkflowEngine(testDeps(maxWaitMs ? { maxWaitMs } : {}), defaultNodeRegistry);
    const def = workflow(
      [
        { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        {
          name: 'F',
          type: 'n8n-nodes-base.form',
          typeVersion: 1,
          parameters: { formFields: { values: [{ fieldLabel: 'Name' }] }, ...parameters },
        },
      ],
      [['T', 'F']],
    );
    return e.run(def, { nodeName: 'T', items: [{ json: { n: 1 } }] }, ctx);
  }

  it('waits for the submission only, unless a limit is set', async () => {
    const open = await runPage({});
    expect(open.status).toBe('waiting');
    expect(open.waitTill).toBeNull();
  });

  it('after an interval (n8n default: 1 hour) or at a time, the page stops waiting', async () => {
    const hour = await runPage({ limitWaitTime: true });
    expect(hour.status).toBe('waiting');
    expect(hour.waitTill?.toISOString()).toBe('2030-01-02T04:04:05.000Z');
    const days = await runPage({ limitWaitTime: true, resumeAmount: 2, resumeUnit: 'days' });
    expect(days.waitTill?.toISOString()).toBe('2030-01-04T03:04:05.000Z');
    const at = await runPage({
      limitWaitTime: true,
      limitType: 'atSpecifiedTime',
      maxDateAndTime: '2030-01-03T00:00:00Z',
    });
    expect(at.waitTill?.toISOString()).toBe('2030-01-03T00:00:00.000Z');
  });

  it('a time already past goes on at once with the input; a bad or too distant time fails the node', async () => {
    const past = await runPage({
      limitWaitTime: true,
      limitType: 'atSpecifiedTime',
      maxDateAndTime: '2020-01-01T00:00:00Z',
    });
    expect(past.status).toBe('success');
    expect(jsonOf(past.state, 'F')).toEqual([{ n: 1 }]);
    const bad = await runPage({ limitWaitTime: true, limitType: 'atSpecifiedTime', maxDateAndTime: 'soon' });
    expect(bad.state.error?.message).toBe("Form: 'soon' is not a date");
    const far = await runPage({ limitWaitTime: true, resumeAmount: 3, resumeUnit: 'days' }, 86_400_000);
    expect(far.state.error?.message).toMatch(/beyond the longest wait allowed \(86400 s/);
  });
});

describe('zip entry names of an ending’s download', () => {
  it('keeps only the last segment of an uploaded file name, never a way out of the folder', () => {
    expect(['../../etc/passwd', 'a\\..\\b.txt', '..', '', 'ok.pdf', 'x\u0000y'].map(zipEntryName)).toEqual([
      'passwd',
      'b.txt',
      'file',
      'file',
      'ok.pdf',
      'xy',
    ]);
  });
});
