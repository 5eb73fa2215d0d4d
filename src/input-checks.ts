/**
 * Checks of a command's input paths, made before the command opens (or creates) the database: a missing file or folder
 * stops the command with a message naming it, and nothing is created on disk.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { PulseError } from './errors.js';

/** A command's input that is not there (exit code 1, the message names the path). */
export class InputError extends PulseError {}

function kindOf(p: string): 'file' | 'dir' | 'other' | undefined {
  try {
    const s = statSync(p);
    return s.isFile() ? 'file' : s.isDirectory() ? 'dir' : 'other';
  } catch {
    return undefined;
  }
}

/** `option` names a readable regular file (or a pipe). */
export function requireFile(option: string, file: string): void {
  const kind = kindOf(file);
  if (kind === undefined) throw new InputError(`${option} ${file}: no such file`);
  if (kind === 'dir') throw new InputError(`${option} ${file}: is a folder, expected a file`);
}

/** `option` names a folder holding `files`. */
export function requireDir(option: string, dir: string, files: string[] = []): void {
  const kind = kindOf(dir);
  if (kind === undefined) throw new InputError(`${option} ${dir}: no such folder`);
  if (kind !== 'dir') throw new InputError(`${option} ${dir}: is not a folder`);
  const missing = files.filter((f) => kindOf(path.join(dir, f)) !== 'file');
  if (missing.length) throw new InputError(`${option} ${dir}: missing ${missing.join(', ')}`);
}

/** The folder an output file goes to exists (export-events). */
export function requireParentDir(option: string, file: string): void {
  const dir = path.dirname(path.resolve(file));
  if (kindOf(dir) !== 'dir') throw new InputError(`${option} ${file}: no such folder ${dir}`);
}
