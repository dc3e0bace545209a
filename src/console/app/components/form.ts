import { h } from '../dom';
import { INSTANT_PATTERN, parseInstant } from './format';

/**
 * A text-like input: what the browser offers for the type is what the field
 * takes. An `instant` is typed as ISO 8601 in UTC (format.ts), never in the
 * browser's time zone, and reaches onSubmit as the instant the service takes.
 */
export interface InputField {
  type?: 'text' | 'password' | 'url' | 'number' | 'instant';
  name: string;
  label: string;
  required?: boolean;
  value?: string;
  placeholder?: string;
  size?: number;
  autocomplete?: string;
  /** What the browser accepts (a regular expression of the whole value), and the title it says when it refuses. */
  pattern?: string;
  title?: string;
  /** Values offered as the field is typed in (a datalist); any other that fits is taken too. */
  suggestions?: readonly string[];
}

export interface SelectField {
  type: 'select';
  name: string;
  label: string;
  /** [value, text] pairs, in order. */
  options: readonly (readonly [value: string, text: string])[];
  value?: string;
  /** The browser refuses to submit while the chosen option's value is empty. */
  required?: boolean;
}

export interface TextAreaField {
  type: 'textarea';
  name: string;
  label: string;
  required?: boolean;
  placeholder?: string;
  value?: string;
}

export interface CheckboxField {
  type: 'checkbox';
  name: string;
  label: string;
  value?: boolean;
}

export type Field = InputField | SelectField | TextAreaField | CheckboxField;

/** What was entered, by field name; an empty field is left out. */
export type FormValues = Record<string, string | undefined>;
/** The checkboxes, by name. */
export type FormChecks = Record<string, boolean>;

export type OnSubmit = (values: FormValues, form: HTMLFormElement, checks: FormChecks) => unknown;

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** Each control's id, for its label's `for` (the label holds it too): unique however many forms on a page name a field alike. */
let controlsMade = 0;

function control(f: Field): Control {
  const id = `field-${++controlsMade}-${f.name}`;
  switch (f.type) {
    case 'select':
      return h(
        'select',
        { id, name: f.name, required: f.required },
        ...f.options.map(([value, text]) => h('option', { value, selected: value === f.value }, text)),
      );
    case 'textarea':
      return h('textarea', { id, name: f.name, required: f.required, placeholder: f.placeholder }, f.value ?? '');
    case 'checkbox':
      return h('input', { type: 'checkbox', id, name: f.name, checked: f.value });
    case 'instant':
      return h('input', {
        type: 'text',
        id,
        name: f.name,
        required: f.required,
        value: f.value ?? '',
        placeholder: f.placeholder ?? 'YYYY-MM-DDTHH:MM:SSZ',
        pattern: INSTANT_PATTERN,
        title: 'An instant in UTC, ISO 8601 to the second: 2026-11-25T10:00:05Z',
        size: f.size ?? 22,
        autocomplete: 'off',
      });
    default:
      return h('input', {
        type: f.type ?? 'text',
        id,
        name: f.name,
        required: f.required,
        value: f.value ?? '',
        placeholder: f.placeholder,
        size: f.size,
        autocomplete: f.autocomplete ?? 'off',
        pattern: f.pattern,
        title: f.title,
        list: f.suggestions && `${id}-suggestions`,
      });
  }
}

/** The values a field offers as it is typed in. */
const suggestions = (f: Field, id: string) =>
  'suggestions' in f && f.suggestions && h('datalist', { id: `${id}-suggestions` }, ...f.suggestions.map((value) => h('option', { value })));

/** A form of labelled fields and one submit button; submitting calls onSubmit with what was entered, and reloads nothing. */
export function form(fields: readonly Field[], submitLabel: string, onSubmit: OnSubmit, { id }: { id?: string } = {}): HTMLFormElement {
  const controls = fields.map((f) => [f, control(f)] as const);
  const el = h(
    'form',
    { class: 'fields', id },
    ...controls.map(([f, input]) =>
      f.type === 'checkbox'
        ? h('label', { class: 'check', for: input.id }, input, f.label)
        : h('label', { for: input.id }, f.label, input, suggestions(f, input.id)),
    ),
    h('button', { type: 'submit' }, submitLabel),
  );
  el.addEventListener('submit', (event) => {
    event.preventDefault();
    const values: FormValues = {};
    const checks: FormChecks = {};
    for (const [f, input] of controls) {
      if (f.type === 'checkbox') checks[f.name] = (input as HTMLInputElement).checked;
      else if (input.value === '') continue;
      else if (f.type !== 'instant') values[f.name] = input.value;
      else if (!(values[f.name] = parseInstant(input.value))) return refuse(input, 'Not a day and time: give an instant in UTC, e.g. 2026-11-25T10:00:05Z');
    }
    onSubmit(values, el, checks);
  });
  return el;
}

/** A value the browser's own checks let through but that is none (the 30th of February): said on the field, and nothing is submitted. */
function refuse(input: Control, message: string) {
  input.setCustomValidity(message);
  input.reportValidity();
  input.addEventListener('input', () => input.setCustomValidity(''), { once: true });
}
