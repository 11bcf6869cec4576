/** The store cannot answer the query exactly: it says why and what to do instead. */
export class UsageReportError extends Error {
  override name = 'UsageReportError'
}
