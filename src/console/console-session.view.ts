import type { StaffRole } from '../back-office/replies.public';

/** Who is signed in, as GET and POST /console/session answer it: with the CSRF token the page sends with every change. */
export interface ConsoleSessionView {
  staff_id: string;
  name: string;
  role: StaffRole;
  csrf_token: string;
}
