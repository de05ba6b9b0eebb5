// Why an import stopped: the file cannot be read, or a block is not the block its header says it is.
// What was imported before it stays, and a second run resumes after it.

export class ImportError extends Error {
  constructor(
    message: string,
    /** the block that failed, when one did */
    readonly block?: bigint,
  ) {
    super(message)
    this.name = 'ImportError'
  }
}
