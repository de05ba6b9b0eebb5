// An operator command that declines to act on what it was given (a bad address, an amount above the
// treasury, a chain that already exists): the CLI prints the message and exits 2, like a usage error.

export class Refusal extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'Refusal'
  }
}
