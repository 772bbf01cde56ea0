/**
 * Okapi BM25 over a fixed set of documents (each a list of terms): how well each matches a query's terms, with
 * rarer terms counting more and long documents counting each match less.
 */
export class Bm25 {
  private readonly frequencies: Map<string, number>[];
  private readonly lengths: number[];
  private readonly averageLength: number;
  private readonly documentsWith = new Map<string, number>();

  constructor(
    documents: string[][],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    this.frequencies = documents.map((terms) => {
      const counts = new Map<string, number>();
      for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
      for (const term of counts.keys()) this.documentsWith.set(term, (this.documentsWith.get(term) ?? 0) + 1);
      return counts;
    });
    this.lengths = documents.map((terms) => terms.length);
    this.averageLength = this.lengths.reduce((sum, length) => sum + length, 0) / Math.max(1, documents.length);
  }

  /** The score of document `index` for `query`, and the query terms it holds. */
  score(index: number, query: string[]): { score: number; matched: string[] } {
    const counts = this.frequencies[index]!;
    const length = this.lengths[index]!;
    const total = this.frequencies.length;
    let score = 0;
    const matched: string[] = [];
    for (const term of new Set(query)) {
      const frequency = counts.get(term) ?? 0;
      if (frequency === 0) continue;
      matched.push(term);
      const holding = this.documentsWith.get(term) ?? 0;
      const idf = Math.log(1 + (total - holding + 0.5) / (holding + 0.5));
      score += (idf * frequency * (this.k1 + 1)) / (frequency + this.k1 * (1 - this.b + (this.b * length) / this.averageLength));
    }
    return { score, matched };
  }
}
