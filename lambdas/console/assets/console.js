// Progressive enhancement for the owner console; every page works without it.
// - A button with data-copy="ID" copies the value or text of element ID.
// - A form with class "danger" asks for confirmation before it is sent.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy') || '');
  if (!source || !navigator.clipboard) return;
  const text = 'value' in source ? source.value : source.textContent;
  navigator.clipboard.writeText(text || '').then(
    () => { button.textContent = 'Copied'; },
    () => { button.textContent = 'Copy failed: select and copy by hand'; },
  );
});
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.classList.contains('danger')) return;
  const label = form.querySelector('button[type="submit"]');
  if (!window.confirm(`${label ? label.textContent : 'Continue'}?`)) event.preventDefault();
});
