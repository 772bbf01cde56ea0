/** Where a model judge reaches its API. The model id and prompt come from each pact's pinned policy. */
export interface ModelSettings {
  url: string;
  apiKey: string;
}
