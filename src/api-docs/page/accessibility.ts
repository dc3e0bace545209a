/**
 * What Swagger UI's markup leaves out for people using a keyboard or a
 * screen reader, put in as its components render (axe-core finds each
 * otherwise, test/api-docs/docs-page.browser.test.ts): names for the
 * servers list, the filter box, the try-it fields and the dialog's close
 * button, an Authorize button called what it says, and the keyboard's way
 * into a code block that scrolls.
 */
function mend(root: ParentNode) {
  for (const select of root.querySelectorAll<HTMLSelectElement>('select#servers:not([aria-label])')) select.setAttribute('aria-label', 'Server');
  for (const input of root.querySelectorAll<HTMLInputElement>('input.operation-filter-input:not([aria-label])')) {
    input.setAttribute('aria-label', 'Filter operations');
    input.placeholder = 'Filter by path, method, summary or tag';
  }
  for (const field of root.querySelectorAll<HTMLElement>('.opblock-body :is(input, textarea, select):not([aria-label]):not([type=hidden])')) {
    const parameter = field.closest<HTMLElement>('tr[data-param-name]')?.dataset.paramName;
    field.setAttribute('aria-label', parameter ?? (field.tagName === 'TEXTAREA' ? 'Request body' : 'Value'));
  }
  for (const close of root.querySelectorAll<HTMLButtonElement>('.modal-ux .close-modal:not([aria-label])')) close.setAttribute('aria-label', 'Close');
  // "Apply credentials" would be read for a button that shows "Authorize": its own text names it.
  for (const apply of root.querySelectorAll<HTMLButtonElement>('.modal-ux button.authorize[aria-label]')) apply.removeAttribute('aria-label');
  for (const block of root.querySelectorAll<HTMLElement>('pre.microlight:not([tabindex])')) {
    if (block.scrollHeight > block.clientHeight) {
      block.tabIndex = 0;
      block.setAttribute('aria-label', 'Example (scrolls)');
    }
  }
}

export function mendAccessibility(root: HTMLElement) {
  mend(root);
  new MutationObserver(() => mend(root)).observe(root, { childList: true, subtree: true });
}
