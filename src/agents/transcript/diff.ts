// The diff of a file edit is part of the transcript's shared vocabulary (src/protocol/transcript.ts).
export { changedLines } from '../../protocol/transcript.ts';
