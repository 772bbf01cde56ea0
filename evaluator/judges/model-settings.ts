/** What a model judge needs: the API's base URL and key, the model id and the prompt version. */
export interface ModelSettings {
  url: string;
  apiKey: string;
  model: string;
  promptVersion: string;
}
