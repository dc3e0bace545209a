export const STAFF_ROLES = ['admin', 'reconciler', 'auditor'] as const;

export type StaffRole = (typeof STAFF_ROLES)[number];

/** Who is making a back-office request; every change is stamped with the id. */
export interface StaffMember {
  staffId: string;
  role: StaffRole;
}

/** The staff id of the built-in administrator whose token is ADMIN_TOKEN. */
export const BUILT_IN_ADMIN = 'admin';

/** What the built-in administrator, who has no row in the staff table, is called wherever a name is shown. */
export const BUILT_IN_ADMIN_NAME = 'Administrator (ADMIN_TOKEN)';
