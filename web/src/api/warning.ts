/** The text of the API's `Warning: 299 registry "<text>"` header (a deprecated ICD taken), undefined without one. */
export function warningOf(response: Response): string | undefined {
  return /^299 registry "(.*)"$/.exec(response.headers.get('warning') ?? '')?.[1];
}
