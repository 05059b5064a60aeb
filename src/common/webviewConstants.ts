// Shared by the extension's HTML shell and the webviews' bridge; no imports on purpose.

/** Id of the <script type="application/json"> element that carries a page's initial state. */
export const INITIAL_STATE_ELEMENT_ID = 'empo2-initial-state';
