/** Assertions on failures: the error a call rejects or throws with. */
import { expect } from 'bun:test';
import type { CodedError } from './natives.ts';

/** The error `promise` rejects with (typed as coded: check `code` where it matters); fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<CodedError> {
  try {
    await promise;
  } catch (error) {
    return error as CodedError;
  }
  throw new Error('expected a rejection, but the call resolved');
}

/** {@link rejection}, failing the test unless it is an `Error` with a string `code`. */
export async function codedRejection(promise: Promise<unknown>): Promise<CodedError> {
  const error = await rejection(promise);
  if (!(error instanceof Error)) throw new Error(`expected an Error, got ${String(error)}`);
  expect(typeof (error as { code?: unknown }).code).toBe('string');
  return error;
}

/** The error `body` throws; fails the test if it returns. */
export function thrown(body: () => unknown): CodedError {
  try {
    body();
  } catch (error) {
    return error as CodedError;
  }
  throw new Error('expected an exception, but the call returned');
}
