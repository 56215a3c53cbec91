/** A workspace could not be prepared. The message is user-facing (it becomes the pod's error_message) and never contains a token. */
export class WorkspaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceError';
  }
}
