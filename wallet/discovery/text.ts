/** Words that say nothing about what a task needs. */
const STOP_WORDS = new Set(
  'a an and are as at be by can do for from get give how i in into is it its me my of on or our please some that the their them then this to up us we what when where which who with you your want need find make let about'.split(' '),
);

/** A word reduced to a common stem, so "summaries", "summarise" and "summarize" meet. */
export function stem(word: string): string {
  let w = word.replace(/ise$/, 'ize').replace(/isation$/, 'ization');
  for (const [suffix, replacement] of [['izations', 'ize'], ['ization', 'ize'], ['ations', 'ate'], ['ation', 'ate'], ['ies', 'y'], ['ing', ''], ['ers', ''], ['er', ''], ['es', ''], ['ed', ''], ['s', '']] as const) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length) + replacement;
      break;
    }
  }
  return w;
}

/** The terms of a text: its words in lower case, stop words left out, stemmed. */
export function termsOf(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => !STOP_WORDS.has(word)).map(stem);
}
