import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes: the token is shown once, only its SHA-256 is stored. */
export const newStaffToken = (): string => randomBytes(32).toString('base64url');

export const hashStaffToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();
